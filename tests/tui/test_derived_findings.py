"""A trace recorded before the detectors gets them run on open: ! lists their findings, the timeline and the turn
detail mark them ⚐, and `finding` breakpoints stop at them."""

from __future__ import annotations

from pathlib import Path

from stripebench_tui.commands.run import parse_breaks
from stripebench_tui.formats.open import open_episode
from stripebench_tui.tui.apps.replay_app import create_app
from stripebench_tui.tui.screens.findings_screen import FindingsScreen
from stripebench_tui.tui.sources.episode_source import TraceSource
from stripebench_tui.tui.widgets.status_bar import StatusBar
from tests.tui.conftest import SIZE, settle, widget_text
from tests.tui.episode import write_trace
from tests.tui.findings_episode import findings_events
from tests.tui_live.helpers import wait_for

# recorded before the detectors existed (replays/checkout-migration-400 as first committed): no findings in it
REPLAY = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "traces" / "checkout-migration-400-before-detectors"


async def test_a_replay_without_findings_gets_the_detectors_run_on_open() -> None:
    trace = open_episode(REPLAY)
    assert not [e for e in trace.iter_events() if e.type == "finding"]  # it predates the detectors
    app = create_app(TraceSource(trace), clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.episode
        assert screen.deriver.found is not None and not screen.deriver.deriving
        found = {(f.detector, f.turn) for f in screen.deriver.found}
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
        assert app.episode.deriver.found is None
        assert app.episode.timeline.derived == set()
        await pilot.press("exclamation_mark")
        await pilot.pause()
        assert "derived" not in widget_text(app.screen.query_one("#findings"))


async def test_the_turn_detail_lists_the_derived_findings_of_its_turn() -> None:
    app = create_app(TraceSource(open_episode(REPLAY)), clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.episode
        await pilot.press("end")
        await settle(pilot)
        assert screen.turn is not None and screen.turn.index == 11 and not screen.turn.findings
        assert "finding 400-as-success (derived):" in screen.detail.message_text
        summary = widget_text(screen.detail.summary)
        assert "⚐ 400-as-success" in summary and "derived on open, not recorded" in summary
        await pilot.press("home")  # turn 0 has none
        await settle(pilot)
        assert screen.turn.index == 0 and "finding" not in screen.detail.message_text


async def test_the_detail_already_shown_gains_the_findings_once_they_are_derived() -> None:
    app = create_app(TraceSource(open_episode(REPLAY)), clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.episode
        await pilot.press("end")
        await settle(pilot)
        found = screen.deriver.found
        screen.detail.set_derived([])  # as it was drawn before the detectors had finished
        assert "(derived)" not in screen.detail.message_text
        screen.show_derived(found or [])
        assert "finding 400-as-success (derived):" in screen.detail.message_text


async def test_a_finding_breakpoint_stops_the_replay_at_a_derived_finding() -> None:
    app = create_app(TraceSource(open_episode(REPLAY)), clock=lambda: 0.0, breakpoints=parse_breaks(["finding"]))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.episode
        assert screen.debugger.marks is not None
        assert [(h.turn, h.reason.split(": ")[1]) for h in screen.debugger.marks.hits] == [
            (11, "finding 400-as-success"), (11, "finding unverified-finish")]
        assert screen.turn is not None and screen.turn.index == 0
        await pilot.press("m")  # playback at max speed, from turn 0
        await pilot.press("space")
        await wait_for(pilot, lambda: not screen.playing, what="playback to stop")
        assert screen.turn is not None and screen.turn.index == 11
        assert "stopped: breakpoint #1 (finding): finding 400-as-success" in screen.query_one(StatusBar).line_text


async def test_with_breakpoints_the_detectors_run_once_for_marks_and_findings(monkeypatch) -> None:
    from stripebench_tui.findings import runner

    runs = []
    original = runner.FindingsRunner.__init__

    def counting(self, *args, **kwargs):
        runs.append(1)
        original(self, *args, **kwargs)

    monkeypatch.setattr(runner.FindingsRunner, "__init__", counting)
    app = create_app(TraceSource(open_episode(REPLAY)), clock=lambda: 0.0, breakpoints=parse_breaks(["finding"]))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.episode
        await wait_for(pilot, lambda: screen.debugger.marks is not None and not screen.deriver.deriving, what="the marks scan")
        assert len(runs) == 1, f"the detectors ran {len(runs)} times"
        found = {(f.detector, f.turn) for f in screen.deriver.found}
        assert ("400-as-success", 11) in found  # the findings pane and ⚐ marks got the scan's findings
        assert [h.turn for h in screen.debugger.marks.hits] == [11, 11]
        rows = widget_text(screen.timeline).splitlines()
        assert any(line.strip("│ ").startswith("11") and "⚐" in line for line in rows)
