"""The batch view: a grid of a batch directory's episodes (tasks × models × runs, coloured by score).

Enter opens the selected episode's replay; Escape (or b) comes back to the grid. The grid re-reads the
cells' result and running files every second, so a batch that is still running fills in as episodes end.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from stripebench_tui.batch.manifest import Batch
from stripebench_tui.batch.matrix import Cell
from stripebench_tui.tui.screens.episode_screen import EpisodeScreen
from stripebench_tui.tui.source import TraceSource

REFRESH = 1.0  # seconds between looks at the batch directory


def cell_label(batch: Batch, cell: Cell) -> Text:
    """What a grid cell shows: the score coloured red → green, or where the episode is."""
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


class BatchGridScreen(Screen[None]):
    """Rows: environments; columns: model × run."""

    BINDINGS = [Binding("enter", "open", "Open episode"), Binding("q", "quit", "Quit")]

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.batch = Batch.open(root)
        self.envs = list(dict.fromkeys(c.env for c in self.batch.cells))
        self.columns = list(dict.fromkeys((c.agent_label, c.run) for c in self.batch.cells))
        self.by_place = {(c.env, (c.agent_label, c.run)): c for c in self.batch.cells}

    def compose(self) -> ComposeResult:
        yield Static(id="summary")
        yield DataTable(id="grid", cursor_type="cell", zebra_stripes=True)
        yield Footer()

    @property
    def grid(self) -> DataTable[Any]:
        return self.query_one(DataTable)

    def on_mount(self) -> None:
        grid = self.grid
        for label, run in self.columns:
            grid.add_column(f"{label} #{run}", key=f"{label}#{run}")
        for env in self.envs:
            grid.add_row(*self._labels(env), key=env, label=env)
        self._summary()
        grid.focus()
        self.set_interval(REFRESH, self.refresh_cells)

    def _labels(self, env: str) -> list[Text]:
        return [cell_label(self.batch, c) if (c := self.by_place.get((env, col))) else Text("") for col in self.columns]

    def refresh_cells(self) -> None:
        """Re-read every cell's state (a live batch's episodes end while the grid is open)."""
        for env in self.envs:
            for (label, run), text in zip(self.columns, self._labels(env)):
                self.grid.update_cell(env, f"{label}#{run}", text)
        self._summary()

    def _summary(self) -> None:
        done = sum(1 for c in self.batch.cells if self.batch.finished(c))
        running = sum(1 for c in self.batch.cells if self.batch.running(c) is not None and not self.batch.finished(c))
        self.query_one("#summary", Static).update(
            f"{self.batch.root} · {done}/{len(self.batch.cells)} episodes finished · {running} running · Enter opens one")

    def selected(self) -> Cell | None:
        coordinate = self.grid.cursor_coordinate
        if not (0 <= coordinate.row < len(self.envs) and 0 <= coordinate.column < len(self.columns)):
            return None
        return self.by_place.get((self.envs[coordinate.row], self.columns[coordinate.column]))

    def action_open(self) -> None:
        from stripebench_tui.formats.open import open_episode
        from stripebench_tui.errors import UserError

        cell = self.selected()
        trace = self.batch.episode_dir(cell) / "trace.jsonl" if cell is not None else None
        if trace is None or not trace.is_file():
            self.notify("This episode has not started yet.", title="Batch")
            return
        try:
            opened = open_episode(trace)
        except UserError as exc:
            self.notify(str(exc), title="Batch", severity="error")
            return
        self.app.push_screen(BatchEpisodeScreen(TraceSource(opened)))

    def on_data_table_cell_selected(self, _event: Any) -> None:
        self.action_open()  # Enter on a DataTable cell arrives as a selection

    def action_quit(self) -> None:
        self.app.exit()


class BatchApp(App[None]):
    """The batch grid, with episodes opened on top of it."""

    TITLE = "stripebench batch"

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root

    def on_mount(self) -> None:
        self.push_screen(BatchGridScreen(self.root))


def run_batch_grid(root: Path) -> None:
    """Open the grid on a batch directory and run until the user quits."""
    BatchApp(root).run()


__all__ = ["BatchApp", "BatchEpisodeScreen", "BatchGridScreen", "cell_label", "run_batch_grid"]
