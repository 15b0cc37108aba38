"""The ``/`` search prompt at the bottom of the replay screen."""

from __future__ import annotations

from pathlib import Path

from textual.binding import Binding
from textual.message import Message
from textual.widgets import Input


class SearchBar(Input):
    """Hidden until ``/``; Enter searches, Escape closes."""

    DEFAULT_CSS = Path(__file__).with_suffix(".tcss").read_text()
    BINDINGS = [Binding("escape", "close", "Close search", show=False)]

    class Closed(Message):
        """The user left the search prompt."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(placeholder="Search messages and outputs (Enter to find, Esc to close)", id=id)

    def open(self) -> None:
        self.display = True
        self.focus()

    def action_close(self) -> None:
        self.display = False
        self.post_message(self.Closed())
