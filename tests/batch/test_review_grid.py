"""The batch grid's review queue (Pilot): best runs first, a key per verdict written beside the trace, the next best
coming to the head when a best run is judged not valid, the transcript one key away, the verdict's mark on the grid."""

from __future__ import annotations

from pathlib import Path

from stripebench_tui.core.review import load_review
from stripebench_tui.tui.apps.batch_app import BatchApp
from stripebench_tui.tui.screens.batch_grid import BatchEpisodeScreen, BatchGridScreen
from stripebench_tui.tui.screens.review_queue import ReviewQueueScreen
from tests.batch.test_batch_grid import make_batch


def rows(screen: ReviewQueueScreen) -> list[tuple[str, str, str]]:
    """(best mark, cell id, verdict) of each row, in order."""
    return [(str(screen.table.get_cell_at((r, 0))), run.cell.id, str(screen.table.get_cell_at((r, 6))))
            for r, (_, run) in enumerate(screen.queue)]


async def test_the_review_queue_judges_runs_and_the_best_gives_way(tmp_path: Path) -> None:
    batch = make_batch(tmp_path / "b")  # checkout-migration r1 1.0, r2 0.0; bookings-payments r1 1.0, r2 running
    cm1, cm2, bp1 = (batch.cells[0], batch.cells[1], batch.cells[2])
    app = BatchApp(batch.root)
    async with app.run_test(size=(160, 30)) as pilot:
        await pilot.pause()
        grid = app.screen
        assert isinstance(grid, BatchGridScreen)
        await pilot.press("r")
        await pilot.pause()
        queue = app.screen
        assert isinstance(queue, ReviewQueueScreen)
        assert rows(queue) == [("best", cm1.id, "—"), ("best", bp1.id, "—"), ("", cm2.id, "—")]
        assert "0 of 2 best runs reviewed" in str(queue.query_one("#review-summary").render())

        await pilot.press("x")  # integrity on checkout-migration's best run: its 0.0 run is the best now
        await pilot.pause()
        judged = load_review(batch.episode_dir(cm1))
        assert judged is not None and judged.verdict == "integrity"
        assert rows(queue) == [("best", cm2.id, "—"), ("best", bp1.id, "—"), ("", cm1.id, "integrity")]
        assert queue.table.cursor_row == 1  # on to the next run

        await pilot.press("o")  # other without a note: refused, nothing written
        await pilot.pause()
        assert load_review(batch.episode_dir(bp1)) is None
        await pilot.press("n", *"grader skipped", "enter", "o")  # the note goes with the next verdict
        await pilot.pause()
        other = load_review(batch.episode_dir(bp1))
        assert other is not None and (other.verdict, other.note) == ("other", "grader skipped")
        # bookings-payments has no other finished run: no best run stands for it, so one best run is left to review
        assert "0 of 1 best runs reviewed" in str(queue.query_one("#review-summary").render())

        queue.table.move_cursor(row=[r[1] for r in rows(queue)].index(cm2.id))
        await pilot.press("v")
        await pilot.pause()
        assert "1 of 1 best runs reviewed" in str(queue.query_one("#review-summary").render())

        queue.table.move_cursor(row=[r[1] for r in rows(queue)].index(cm2.id))
        await pilot.press("t")  # the transcript, one key away
        await pilot.pause()
        assert isinstance(app.screen, BatchEpisodeScreen)
        assert Path(app.screen.source.trace.path).parent == batch.episode_dir(cm2)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is queue
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is grid
        grid.refresh_cells()
        await pilot.pause()
        assert str(grid.grid.get_cell_at((0, 0))) == "1.00 ✗"  # checkout-migration r1: integrity
        assert str(grid.grid.get_cell_at((0, 1))).startswith("0.00 ✓")  # r2: valid (and its findings' ⚑)
