"""The live screen's ``?`` help: the live controls and the replay's navigation keys, from the live keymap."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from stripebench_tui.tui.screens.help_screen import HelpScreen


class LiveHelpScreen(HelpScreen):
    """The help table over ``live_help_rows()``."""

    def __init__(self, rows: list[tuple[str, str, str]]) -> None:
        super().__init__()
        self.rows = rows

    def compose(self) -> ComposeResult:
        table = Table(box=None, show_header=True, header_style="bold", expand=True)
        table.add_column("keys", style="bold cyan", no_wrap=True)
        table.add_column("action", style="bold", no_wrap=True)
        table.add_column("what it does")
        for keys, title, description in self.rows:
            table.add_row(keys, title, description)
        with VerticalScroll(id="help-body") as body:
            body.border_title = "Keys (live episode)"
            body.border_subtitle = "Esc to close · Ctrl+P for the command palette"
            yield Static(table, id="help-table")
            yield Static(Text("Approve, edit and reject apply to a call waiting for approval (--approve).", style="dim"))
