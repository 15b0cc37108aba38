"""The batch grid (Pilot): scores coloured per cell, Enter opens the episode's replay, Escape comes back, live updates."""

from __future__ import annotations

import shutil
from pathlib import Path

from stripebench_tui.batch.manifest import Batch
from stripebench_tui.batch.matrix import Cell
from stripebench_tui.tui.apps.batch_app import BatchApp
from stripebench_tui.tui.screens.batch_grid import BatchEpisodeScreen, BatchGridScreen, SearchScreen

REPLAYS = Path(__file__).resolve().parents[2] / "replays"


def _cell(env: str, run: int) -> Cell:
    return Cell(id=f"{env}__oracle__r{run}", env=env, env_ref=env, category="backend", agent_label="oracle",
                agent="oracle", options={}, run=run, seed=run - 1, memory=1 << 30, argv=["run", env])


def make_batch(root: Path) -> Batch:
    """Two tasks × one agent × two runs from the sample replays: three finished, one still running."""
    cells = [_cell("checkout-migration", 1), _cell("checkout-migration", 2), _cell("bookings-payments", 1),
             _cell("bookings-payments", 2)]
    batch = Batch.create(root, {"runs": 2}, cells)
    samples = {"checkout-migration__oracle__r1": ("checkout-migration-oracle", 1.0),
               "checkout-migration__oracle__r2": ("checkout-migration-400", 0.0),
               "bookings-payments__oracle__r1": ("bookings-payments-oracle", 1.0)}
    for cell in cells:
        episode = batch.start_attempt(cell, 1, "local")
        if cell.id in samples:
            sample, score = samples[cell.id]
            shutil.copytree(REPLAYS / sample, episode)
            batch.finish(cell, {"status": "passed" if score else "failed", "score": score, "attempts": 1})
    return batch


async def test_grid_opens_an_episode_and_comes_back(tmp_path: Path) -> None:
    batch = make_batch(tmp_path / "b")
    app = BatchApp(batch.root)
    async with app.run_test(size=(140, 30)) as pilot:
        await pilot.pause()
        grid_screen = app.screen
        assert isinstance(grid_screen, BatchGridScreen)
        grid = grid_screen.grid
        assert [str(grid.get_cell_at((0, c))) for c in range(2)] == ["1.00", "0.00 ⚑"]  # ⚑: it has findings
        assert "green" in grid.get_cell_at((0, 0)).style and "red" in grid.get_cell_at((0, 1)).style
        assert str(grid.get_cell_at((1, 1))) == "run #1"  # still running
        await pilot.press("right", "enter")  # checkout-migration, run 2: the failing episode
        await pilot.pause()
        assert isinstance(app.screen, BatchEpisodeScreen)
        assert app.screen.source.header.env == "checkout-migration"
        assert Path(app.screen.source.trace.path).parent == batch.episode_dir(batch.cells[1])
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is grid_screen and grid.cursor_coordinate == (0, 1)
        await pilot.press("down", "enter")  # bookings-payments run 2 has no trace yet: stays on the grid
        await pilot.pause()
        assert app.screen is grid_screen


async def test_a_live_batch_fills_in_as_episodes_end(tmp_path: Path) -> None:
    batch = make_batch(tmp_path / "b")
    app = BatchApp(batch.root)
    async with app.run_test(size=(140, 30)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, BatchGridScreen)
        running = batch.cells[3]
        shutil.copytree(REPLAYS / "bookings-payments-oracle", batch.episode_dir(running), dirs_exist_ok=True)
        batch.finish(running, {"status": "passed", "score": 1.0, "attempts": 1})
        screen.refresh_cells()  # what the grid's timer calls every second
        await pilot.pause()
        assert str(screen.grid.get_cell_at((1, 1))) == "1.00"
        assert "4/4 episodes finished" in str(screen.query_one("#summary").render())


async def test_the_findings_column_the_filter_and_search_to_a_turn(tmp_path: Path) -> None:
    batch = make_batch(tmp_path / "b")
    app = BatchApp(batch.root)
    async with app.run_test(size=(160, 30)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, BatchGridScreen)
        grid = screen.grid
        assert str(grid.get_cell_at((0, 2))) == "400-as-success ×1  unverified-finish ×1"  # checkout-migration's row
        assert str(grid.get_cell_at((1, 2))) == "—"  # bookings-payments: none
        await pilot.press("f")  # the first kind: 400-as-success; episodes without it are dimmed
        assert screen.only == "400-as-success"
        assert "dim" in str(grid.get_cell_at((0, 0)).style) and "dim" not in str(grid.get_cell_at((0, 1)).style)
        await pilot.press("f", "f")  # unverified-finish, then every episode again
        assert screen.only is None and "dim" not in str(grid.get_cell_at((0, 0)).style)

        await pilot.press("slash")
        await pilot.pause()
        search = app.screen
        assert isinstance(search, SearchScreen)
        await pilot.press(*"finding:400-as-success", "enter")
        await pilot.pause()
        assert search.places == [(batch.episode_dir(batch.cells[1]), 11)]
        await pilot.press("enter")  # the hit: that episode, at that turn
        await pilot.pause()
        opened = app.screen
        assert isinstance(opened, BatchEpisodeScreen)
        assert Path(opened.source.trace.path).parent == batch.episode_dir(batch.cells[1])
        assert opened.turn is not None and opened.turn.index == 11

        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen
        await pilot.press("slash")
        await pilot.pause()
        await pilot.press(*"status:4xx", "enter")  # a query that does not parse: said in the box, nothing opens
        await pilot.pause()
        assert isinstance(app.screen, SearchScreen) and app.screen.places == []
        assert "qualifies a request" in str(app.screen.query_one("#search-status").render())
