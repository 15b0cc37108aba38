"""The fork dialog: who continues after the recorded turns are re-executed."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from stripebench_tui.tui.screens.dialog import DialogScreen

FORK_AGENTS = ("human", "noop", "oracle", "anthropic", "openai")


class ForkScreen(DialogScreen["str | None"]):
    """Returns the chosen agent's name, or None when cancelled."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, turn: int) -> None:
        super().__init__()
        self.turn = turn

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = f"Fork at turn {self.turn}"
            yield Label(f"Turns 1-{self.turn} are re-executed on a fresh environment (the first divergence is "
                        "flagged), then this agent continues live:", classes="help", markup=False)
            yield OptionList(*[Option(name, id=name) for name in FORK_AGENTS], id="fork-agent")
            yield Label("Enter picks · Esc cancels", classes="help")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
