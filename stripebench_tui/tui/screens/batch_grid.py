"""The batch view: a grid of a batch directory's episodes (tasks × models × runs, coloured by score).

Enter opens the selected episode's replay; Escape (or b) comes back to the grid. The grid re-reads the
cells' result and running files every second, so a batch that is still running fills in as episodes end.
A cell whose episode has findings (recorded, or found by the detectors in its trace) is marked ⚑, the last
column sums them per task, and f filters by finding kind (the other episodes are dimmed). / searches the
batch (``stripebench search``'s queries) and Enter on a hit opens that episode at that turn. r opens the review
queue (``tui.screens.review_queue``); a reviewed run's cell carries its verdict's mark (✓ valid, ⌁ infra-failure,
✗ integrity or other).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Footer, Input, OptionList, Static
from textual.widgets.option_list import Option

from stripebench_tui.batch.manifest import Batch
from stripebench_tui.batch.matrix import Cell
from stripebench_tui.batch.sweep_report import read_episode
from stripebench_tui.core.review import load_review
from stripebench_tui.errors import UserError
from stripebench_tui.formats.open import open_episode
from stripebench_tui.search import search
from stripebench_tui.tui.screens.episode_screen import EpisodeScreen, PlaybackOptions
from stripebench_tui.tui.screens.review_queue import ReviewQueueScreen
from stripebench_tui.tui.sources.episode_source import TraceSource
from stripebench_tui.tui.text import clean, plain

REFRESH = 1.0  # seconds between looks at the batch directory


FINDINGS_KEY = "findings"


class FindingsCache:
    """Each finished episode's finding kinds, read once per version of its trace."""

    def __init__(self, batch: Batch) -> None:
        self.batch = batch
        self._seen: dict[str, tuple[int, list[str]]] = {}

    def kinds(self, cell: Cell) -> list[str]:

        if not self.batch.finished(cell):
            return []
        episode = self.batch.episode_dir(cell)
        try:
            stamp = (episode / "trace.jsonl").stat().st_mtime_ns
        except OSError:
            return []
        cached = self._seen.get(cell.id)
        if cached is None or cached[0] != stamp:
            summary = read_episode(episode)
            found = sorted({kind for kind, _ in summary.findings}) if summary is not None else []
            self._seen[cell.id] = cached = (stamp, found)
        return cached[1]


def cell_label(batch: Batch, cell: Cell, findings: list[str] | None = None, only: str | None = None) -> Text:
    """What a grid cell shows: the score coloured red → green (⚑ when it has findings), or where the episode is;
    dimmed when ``only`` names a finding kind it does not have."""
    text = _score_label(batch, cell)
    mark = _review_mark(batch, cell)
    if mark is not None:
        text.append(f" {mark[0]}", style=mark[1])
    if findings:
        text.append(" ⚑", style="bold magenta")
    if only is not None and only not in (findings or []):
        return Text(text.plain, style="dim")
    return text


REVIEW_MARKS = {"valid": ("✓", "green"), "infra-failure": ("⌁", "yellow"), "integrity": ("✗", "bold red"),
                "other": ("✗", "red")}


def _review_mark(batch: Batch, cell: Cell) -> tuple[str, str] | None:

    try:
        review = load_review(batch.episode_dir(cell))
    except UserError:
        return ("?", "red")  # a review file that cannot be read: `stripebench review` names it
    return REVIEW_MARKS[review.verdict] if review is not None else None


def _score_label(batch: Batch, cell: Cell) -> Text:
    result = batch.result(cell)
    if result is None:
        running = batch.running(cell)
        if running is not None:
            return Text(f"run #{running.get('attempt', 1)}", style="bold cyan")
        return Text("·", style="dim")
    status, score = result.get("status"), result.get("score")
    if status == "infra_error":
        return Text("infra", style="yellow")
    if not isinstance(score, (int, float)):
        return Text(str(status or "?"), style="red")
    style = "bold green" if score >= 1.0 else ("yellow" if score >= 0.5 else "red")
    return Text(f"{score:.2f}", style=style)


class BatchEpisodeScreen(EpisodeScreen):
    """An episode's replay opened from the grid; Escape goes back to it."""

    BINDINGS = [*EpisodeScreen.BINDINGS, Binding("escape,b", "back", "Grid")]

    def action_back(self) -> None:
        self.app.pop_screen()


class SearchScreen(ModalScreen[tuple[Path, int] | None]):
    """A query over the batch's episodes and its hits; Enter on a hit gives (episode directory, turn)."""

    BINDINGS = [Binding("escape", "dismiss_none", "Back")]
    DEFAULT_CSS = """
    SearchScreen { align: center middle; }
    SearchScreen > #search-box { width: 90%; height: 80%; border: round $accent; background: $surface; }
    SearchScreen #search-status { height: 1; color: $text-muted; }
    """

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root
        self.places: list[tuple[Path, int]] = []

    def compose(self) -> ComposeResult:

        with Vertical(id="search-box"):
            yield Input(placeholder="finding:400-as-success · request:'POST /v1/refunds' status:4xx · tool:NAME · "
                                    "verdict:fail criterion:NAME · words", id="search-query")
            yield Static("Enter searches; Enter on a hit opens that turn; Escape goes back.", id="search-status")
            yield OptionList(id="search-hits")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:

        status = self.query_one("#search-status", Static)
        hits = self.query_one(OptionList)
        hits.clear_options()
        self.places = []
        try:
            found = search(self.root, event.value)
        except UserError as exc:
            status.update(plain(str(exc), style="red"))
            return
        for episode in found.episodes:
            for hit in episode.hits:
                self.places.append((episode.episode, hit.turn))
                hits.add_option(Option(Text.assemble((clean(episode.label), "bold"), f"  turn {hit.turn}  ",
                                                     (hit.kind, "cyan"), f"  {clean(hit.context)}")))
        total = len(self.places)
        status.update(f"{total} hits in {len(found.episodes)} of {found.searched} episodes"
                      + (f"; {len(found.skipped)} skipped" if found.skipped else "") + ("" if total else " — try another query"))
        if total:
            hits.highlighted = 0
            hits.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.places[event.option_index])

    def action_dismiss_none(self) -> None:
        self.dismiss(None)


class BatchGridScreen(Screen[None]):
    """Rows: environments; columns: model × run, then the findings of the row's episodes."""

    BINDINGS = [Binding("enter", "open", "Open episode"), Binding("f", "filter", "Filter by finding"),
                Binding("slash", "search", "Search"), Binding("r", "review", "Review queue"), Binding("q", "quit", "Quit")]

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.sweep = Batch.open(root)
        self.envs = list(dict.fromkeys(c.env for c in self.sweep.cells))
        self.columns = list(dict.fromkeys((c.agent_label, c.run) for c in self.sweep.cells))
        self.by_place = {(c.env, (c.agent_label, c.run)): c for c in self.sweep.cells}
        self.findings = FindingsCache(self.sweep)
        self.only: str | None = None  # the finding kind the grid is filtered by

    def compose(self) -> ComposeResult:
        yield Static(id="summary")
        yield DataTable(id="grid", cursor_type="cell", zebra_stripes=True)
        yield Footer()

    @property
    def grid(self) -> DataTable[Any]:
        return self.query_one(DataTable)

    def on_mount(self) -> None:
        grid = self.grid
        for label, run in self.columns:  # agent and environment names are text, never markup (a "[@click=…]" in one
            grid.add_column(plain(f"{label} #{run}"), key=f"{label}#{run}")  # would be a live action)
        grid.add_column("findings", key=FINDINGS_KEY)
        for env in self.envs:
            grid.add_row(*self._labels(env), self._findings_label(env), key=env, label=plain(env))
        self._summary()
        grid.focus()
        self.set_interval(REFRESH, self.refresh_cells)

    def _labels(self, env: str) -> list[Text]:
        return [cell_label(self.sweep, c, self.findings.kinds(c), self.only) if (c := self.by_place.get((env, col)))
                else Text("") for col in self.columns]

    def _findings_label(self, env: str) -> Text:
        """The row's finding kinds, each with the number of its episodes where it fired."""
        counts: dict[str, int] = {}
        for col in self.columns:
            cell = self.by_place.get((env, col))
            for kind in self.findings.kinds(cell) if cell is not None else ():
                counts[kind] = counts.get(kind, 0) + 1
        text = Text()
        for kind, n in sorted(counts.items()):
            text.append(("  " if text else "") + clean(f"{kind} ×{n}"),
                        style="bold magenta" if self.only in (None, kind) else "dim")
        return text or Text("—", style="dim")

    def all_kinds(self) -> list[str]:
        return sorted({k for c in self.sweep.cells for k in self.findings.kinds(c)})

    def refresh_cells(self) -> None:
        """Re-read every cell's state (a live batch's episodes end while the grid is open)."""
        for env in self.envs:
            for (label, run), text in zip(self.columns, self._labels(env), strict=False):
                self.grid.update_cell(env, f"{label}#{run}", text)
            self.grid.update_cell(env, FINDINGS_KEY, self._findings_label(env))
        self._summary()

    def action_filter(self) -> None:
        """Cycle the filter: every episode, then each finding kind in turn."""
        kinds = self.all_kinds()
        if not kinds:
            self.notify("No finding fired in this batch.", title="Batch")
            return
        order: list[str | None] = [None, *kinds]
        self.only = order[(order.index(self.only) + 1) % len(order)] if self.only in order else None
        self.refresh_cells()

    def action_search(self) -> None:
        def opened(place: tuple[Path, int] | None) -> None:
            if place is not None:
                self.open_at(place[0] / "trace.jsonl", place[1])

        self.app.push_screen(SearchScreen(self.sweep.root), opened)

    def action_review(self) -> None:

        self.app.push_screen(ReviewQueueScreen(self.sweep, lambda trace: self.open_at(trace, None)))

    def _summary(self) -> None:
        done = sum(1 for c in self.sweep.cells if self.sweep.finished(c))
        running = sum(1 for c in self.sweep.cells if self.sweep.running(c) is not None and not self.sweep.finished(c))
        shown = f" · showing finding {self.only} (f: next)" if self.only else " · f filters by finding"
        self.query_one("#summary", Static).update(plain(
            f"{self.sweep.root} · {done}/{len(self.sweep.cells)} episodes finished · {running} running · Enter opens one"
            f"{shown} · / searches · r reviews"))

    def selected(self) -> Cell | None:
        coordinate = self.grid.cursor_coordinate
        if not (0 <= coordinate.row < len(self.envs) and 0 <= coordinate.column < len(self.columns)):
            return None
        return self.by_place.get((self.envs[coordinate.row], self.columns[coordinate.column]))

    def action_open(self) -> None:
        cell = self.selected()
        trace = self.sweep.episode_dir(cell) / "trace.jsonl" if cell is not None else None
        if trace is None or not trace.is_file():
            self.notify("This episode has not started yet.", title="Batch")
            return
        self.open_at(trace, None)

    def open_at(self, trace: Path, turn: int | None) -> None:
        """Open the episode of ``trace`` on top of the grid, at ``turn`` (None: its first)."""

        try:
            opened = open_episode(trace)
        except UserError as exc:
            self.notify(clean(str(exc)), title="Batch", severity="error", markup=False)
            return
        self.app.push_screen(BatchEpisodeScreen(TraceSource(opened), PlaybackOptions(start_turn=turn)))

    def on_data_table_cell_selected(self, _event: DataTable.CellSelected) -> None:
        self.action_open()  # Enter on a DataTable cell arrives as a selection

    def action_quit(self) -> None:
        self.app.exit()


__all__ = ["BatchEpisodeScreen", "BatchGridScreen", "FindingsCache", "SearchScreen", "cell_label"]
