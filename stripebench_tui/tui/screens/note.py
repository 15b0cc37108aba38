"""The note dialogs: write (or remove) the note on a turn, and list the episode's notes to jump to one."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from stripebench_tui.core.annotations import Note
from stripebench_tui.tui.screens.dialog import DialogScreen
from stripebench_tui.tui.text import clean

REMOVE = object()  # the note dialog's result when the operator removes the note


class NoteScreen(DialogScreen["str | object | None"]):
    """Returns the note's text (may be empty: a plain bookmark), ``REMOVE``, or None when cancelled."""

    # before the Input's delete-right
    BINDINGS = [Binding("escape", "cancel", "Cancel"), Binding("ctrl+d", "remove", "Remove note", priority=True)]

    def __init__(self, turn: int, existing: Note | None) -> None:
        super().__init__()
        self.turn = turn
        self.existing = existing

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = f"Note on turn {self.turn}"
            yield Input(value=self.existing.text if self.existing else "", id="note-text", select_on_focus=False,
                        placeholder="what happened here (Enter saves; empty just bookmarks the turn)")
            hint = "Enter saves · Ctrl+D removes the note · Esc cancels" if self.existing else "Enter saves · Esc cancels"
            yield Label(hint + " — stored beside the trace, which is left unchanged", classes="help", markup=False)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip())

    def action_remove(self) -> None:
        self.dismiss(REMOVE if self.existing else None)

    def action_cancel(self) -> None:
        self.dismiss(None)


class NotesListScreen(DialogScreen["int | None"]):
    """Returns the turn number of the note picked, or None when cancelled."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, notes: list[Note]) -> None:
        super().__init__()
        self.notes = list(notes)

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = f"Notes ({len(self.notes)})"
            options = [Option(Text(f"turn {n.turn:>5}  {clean(n.text) or '(bookmark)'}"), id=str(n.turn)) for n in self.notes]
            yield OptionList(*options, id="notes-list")
            yield Label("Enter goes to the turn · Esc closes", classes="help")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(int(event.option.id or 0))

    def action_cancel(self) -> None:
        self.dismiss(None)
