"""The fork dialog: who continues from a recorded turn (its checkpoint restored, or the turns re-executed)."""

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

    def __init__(self, turn: int, restores: bool = False) -> None:
        super().__init__()
        self.turn = turn
        self.restores = restores  # the episode kept a checkpoint of the turn: nothing is re-executed

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = f"Fork at turn {self.turn}"
            # Two short lines: a Label does not wrap, and the dialog is narrower than one sentence of both.
            yield Label(f"Turn {self.turn}'s checkpoint is restored: nothing is re-executed." if self.restores else
                        f"Turns 1-{self.turn} are re-executed on a fresh environment (a divergence is flagged).",
                        classes="help", markup=False)
            yield Label("Then this agent continues live:", classes="help", markup=False)
            yield OptionList(*[Option(name, id=name) for name in FORK_AGENTS], id="fork-agent")
            yield Label("Enter picks · Esc cancels", classes="help")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
