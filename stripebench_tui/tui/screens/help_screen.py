"""The ``?`` screen: every key binding, built from the action registry and keymap."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from stripebench_tui.tui.keymaps.keymap import DEFAULT_KEYMAP, help_rows


class HelpScreen(ModalScreen[None]):
    """A table of keys → what they do; any of Escape, q or ? closes it."""

    CSS_PATH = Path(__file__).with_suffix(".tcss")
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close")]

    def __init__(self, keymap: Mapping[str, tuple[str, ...]] = DEFAULT_KEYMAP,
                 rows: list[tuple[str, str, str]] | None = None) -> None:
        super().__init__()
        self.keymap = keymap
        self.rows = rows  # (keys, title, description) from another registry (the live screen's), else help_rows(keymap)

    def compose(self) -> ComposeResult:
        table = Table(box=None, show_header=True, header_style="bold", expand=True)
        table.add_column("keys", style="bold cyan", no_wrap=True)
        table.add_column("action", style="bold", no_wrap=True)
        table.add_column("what it does")
        for keys, title, description in self.rows if self.rows is not None else help_rows(self.keymap):
            table.add_row(keys, title, description)
        with VerticalScroll(id="help-body") as body:
            body.border_title = "Keys"
            body.border_subtitle = "Esc to close · Ctrl+P for the command palette"
            yield Static(table, id="help-table")
            yield Static(Text("The timeline also takes ↑/↓ (or j/k) and PgUp/PgDn.", style="dim"))

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(result)
