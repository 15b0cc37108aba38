"""A trace recorded before the detectors gets them run on open: ! lists their findings, the timeline marks them ⚐."""

from __future__ import annotations

from pathlib import Path

from stripebench_tui.formats.open import open_episode
from stripebench_tui.tui.app import create_app
from stripebench_tui.tui.screens.inspect import FindingsScreen
from stripebench_tui.tui.source import TraceSource
from tests.tui.conftest import SIZE, settle, widget_text
from tests.tui.episode import write_trace
from tests.tui.findings_episode import findings_events

REPLAY = Path(__file__).resolve().parents[2] / "replays" / "checkout-migration-400"


async def test_a_replay_without_findings_gets_the_detectors_run_on_open() -> None:
    trace = open_episode(REPLAY)
    assert not [e for e in trace.iter_events() if e.type == "finding"]  # it predates the detectors
    app = create_app(TraceSource(trace), clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.episode
        assert screen.derived_findings is not None and not screen.deriving
        found = {(f.detector, f.turn) for f in screen.derived_findings}
        assert ("400-as-success", 11) in found
        rows = widget_text(screen.timeline).splitlines()
        assert any(line.strip("│ ").startswith("11") and "⚐" in line for line in rows)
        await pilot.press("exclamation_mark")
        await pilot.pause()
        assert isinstance(app.screen, FindingsScreen)
        pane_text = widget_text(app.screen.query_one("#findings"))
        assert "derived on open, not recorded" in pane_text
        table = app.screen.query_one("#findings-table")
        cells = [str(table.get_row_at(i)[1]) for i in range(table.row_count)]
        assert "400-as-success" in cells


async def test_recorded_findings_are_shown_and_nothing_is_derived(tmp_path: Path) -> None:
    trace = write_trace(tmp_path / "findings.jsonl", findings_events())
    app = create_app(TraceSource(trace), clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.episode.derived_findings is None
        assert app.episode.timeline.derived == set()
        await pilot.press("exclamation_mark")
        await pilot.pause()
        assert "derived" not in widget_text(app.screen.query_one("#findings"))
