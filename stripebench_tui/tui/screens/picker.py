"""A list of the episodes in a folder; Enter opens one (a replay, or attached when it is still running)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from stripebench_tui.core.events import EpisodeEnd
from stripebench_tui.core.trace import EPISODE_TRACE
from stripebench_tui.core.trace_writer import TraceError
from stripebench_tui.formats.open import open_episode
from stripebench_tui.tui.text import clean, plain


@dataclass(frozen=True)
class EpisodeEntry:
    """One trace in the folder, as the list shows it."""

    path: Path
    name: str
    env: str
    agent: str
    status: str  # "passed", "failed", "running", or why it cannot be read
    ended: bool
    readable: bool = True


def find_traces(folder: Path) -> list[Path]:
    """The traces in ``folder``: each sub-folder's trace.jsonl and any *.jsonl directly in it, sorted by name."""
    found = [p for p in folder.glob(f"*/{EPISODE_TRACE}") if p.is_file()]
    found += [p for p in folder.glob("*.jsonl") if p.is_file()]
    return sorted(found, key=lambda p: str(p.relative_to(folder)))


def describe(path: Path, folder: Path) -> EpisodeEntry:
    """What the list says of one trace (a bad file is listed as such, not fatal)."""

    name = str(path.parent.relative_to(folder) if path.name == EPISODE_TRACE else path.relative_to(folder))
    try:
        trace = open_episode(path)
    except TraceError as exc:
        return EpisodeEntry(path, name, "", "", f"cannot read: {exc}", ended=True, readable=False)
    last = trace.last_event
    ended = isinstance(last, EpisodeEnd)
    status = ("passed" if last.passed else "failed") if isinstance(last, EpisodeEnd) else "running"
    return EpisodeEntry(path, name, trace.header.env, trace.header.agent, status, ended)


class PickerScreen(Screen[None]):
    """Episodes of a folder, newest name last; Enter opens the selected one."""

    BINDINGS = [Binding("q", "app.quit", "Quit"), Binding("r", "reload", "Reload")]
    DEFAULT_CSS = """
    PickerScreen #picker-title { height: 1; padding: 0 1; text-style: bold; }
    PickerScreen DataTable { height: 1fr; }
    """

    def __init__(self, folder: Path, open_entry: Callable[[EpisodeEntry], None]) -> None:
        super().__init__()
        self.folder = folder
        self.open_entry = open_entry
        self.entries: list[EpisodeEntry] = []

    def compose(self) -> ComposeResult:
        yield Static(plain(f"Episodes in {self.folder} — Enter opens one, Esc goes back to this list"),
                     id="picker-title")
        yield DataTable(id="episodes", cursor_type="row")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("episode", "environment", "agent", "status")
        self.action_reload()
        table.focus()

    def action_reload(self) -> None:
        table = self.query_one(DataTable)
        table.clear()
        self.entries = [describe(p, self.folder) for p in find_traces(self.folder)]
        for entry in self.entries:
            # Folder, environment and agent names are the traces' own: text, never markup ("[@click=…]" would act).
            table.add_row(plain(entry.name), plain(entry.env), plain(entry.agent), plain(entry.status))
        if not self.entries:
            self.notify(clean(f"No traces in {self.folder} yet (r reloads)."), title="Episodes", markup=False)

    def on_data_table_row_selected(self, message: DataTable.RowSelected) -> None:
        entry = self.entries[message.cursor_row]
        if not entry.readable:
            self.notify(clean(entry.status), title="Episodes", severity="error", markup=False)
            return
        self.open_entry(entry)


__all__ = ["EpisodeEntry", "PickerScreen", "describe", "find_traces"]
