"""The inject dialog: type a note for the agent, or pick one of the environment's hints."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from stripebench_tui.tui.screens.dialog import DialogScreen
from stripebench_tui.tui.text import clean


class InjectScreen(DialogScreen["tuple[str, str] | None"]):
    """Returns (text, kind) with kind "note" or "hint", or None when cancelled."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, hints: list[str]) -> None:
        super().__init__()
        self.hints = list(hints)

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "Inject into the agent's next observations"
            yield Input(placeholder="a note for the agent, Enter to send", id="inject-text")
            if self.hints:
                yield Label("…or pick one of the environment's hints (Enter):", classes="help")
                yield OptionList(*[Option(clean(h), id=str(i)) for i, h in enumerate(self.hints)], id="inject-hints")
            yield Label("Esc cancels", classes="help")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        self.dismiss((text, "note") if text else None)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss((self.hints[int(event.option.id or 0)], "hint"))

    def action_cancel(self) -> None:
        self.dismiss(None)
