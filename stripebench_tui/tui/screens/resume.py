"""The resume dialog: an episode that ended without an end event can go on from its last checkpoint."""

from __future__ import annotations

import shlex
from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from stripebench_tui.tui.screens.dialog import DialogScreen
from stripebench_tui.tui.text import clean

RESUME, CANCEL = "resume", "cancel"


def resume_command(trace_path: Path) -> str:
    """The command line that does the same from a shell."""
    episode = trace_path.parent if trace_path.name == "trace.jsonl" else trace_path
    return f"stripebench resume {shlex.quote(str(episode))} --headless"


class ResumeScreen(DialogScreen["bool | None"]):
    """Returns True to resume here (live), None when cancelled."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, trace_path: Path) -> None:
        super().__init__()
        self.trace_path = trace_path

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "Resume this episode?"
            yield Label("It ended without an end event: its process was killed, ran out of memory or the machine "
                        "restarted (or it still runs elsewhere: then do not resume it). It can go on from its last "
                        "checkpoint with the same agent and options; the events of the turn that was cut short are "
                        "kept beside the trace and that turn is played again.", classes="help", markup=False)
            yield Label(f"From a shell: {clean(resume_command(self.trace_path))}", id="resume-command", markup=False)
            yield OptionList(Option("Resume here, live", id=RESUME), Option("Cancel", id=CANCEL), id="resume-choice")
            yield Label("Enter picks · Esc cancels", classes="help")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(True if event.option.id == RESUME else None)

    def action_cancel(self) -> None:
        self.dismiss(None)


__all__ = ["ResumeScreen", "resume_command"]
