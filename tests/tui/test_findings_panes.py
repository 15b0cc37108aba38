"""The request log and findings panes (R, !), finding marks in the timeline, requests in the turn detail."""

from __future__ import annotations

from pathlib import Path

import pytest

from stripebench_tui.core.state import reduce
from stripebench_tui.tui.apps.replay_app import create_app
from stripebench_tui.tui.screens.findings_screen import FindingsScreen
from stripebench_tui.tui.screens.request_log_screen import RequestLogScreen
from stripebench_tui.tui.sources.episode_source import TraceSource
from stripebench_tui.tui.widgets.request_log import RequestFilter, filter_requests
from stripebench_tui.tui.widgets.verdicts import Verdicts
from tests.tui.conftest import SIZE, settle, widget_text
from tests.tui.episode import write_trace
from tests.tui.findings_episode import findings_events


@pytest.fixture
def findings_app(tmp_path: Path):
    def factory(start_turn: int = 1):
        trace = write_trace(tmp_path / "findings.jsonl", findings_events())
        return create_app(TraceSource(trace), clock=lambda: 0.0, start_turn=start_turn)

    return factory


def test_the_filter_line_narrows_by_status_class_source_method_and_path():
    requests = reduce(findings_events()).requests
    ids = lambda query: [r.request_id for r in filter_requests(requests, query)]
    assert ids("") == ["req_001", "req_002", "req_003", "req_004"]
    assert ids("4xx") == ids("status:400") == ["req_001"]
    assert ids("app") == ids("source:app") == ["req_002", "req_003"]
    assert ids("POST /v1/checkout") == ["req_001", "req_003"]
    assert ids("2xx grader") == ["req_004"] and ids("5xx") == []
    assert RequestFilter.parse("path:/v1/prices").paths == ("/v1/prices",)


async def test_the_request_log_lists_filters_and_shows_bodies(findings_app) -> None:
    app = findings_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("R")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RequestLogScreen)
        pane = screen.pane
        assert pane.table.row_count == 4 and pane.border_title == "Stripe requests (4 of 4)"
        await pilot.press("slash", *"4xx", "enter")
        await pilot.pause()
        assert pane.table.row_count == 1 and pane.shown[0].request_id == "req_001"
        await pilot.press("enter")
        await pilot.pause()
        detail = widget_text(screen.query_one("#request-detail"))
        assert "POST /v1/checkout/sessions → 400" in detail and "Missing required param: line_items." in detail
        assert "parameter_missing" in detail and "mode=payment" in detail
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, RequestLogScreen)


async def test_findings_pane_jumps_to_the_turn_and_opens_the_request(findings_app) -> None:
    app = findings_app(start_turn=4)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "session_created: pass (turn 4)" in app.episode.query_one(Verdicts).summary
        assert "caused by req_003" in app.episode.query_one(Verdicts).summary
        rows = widget_text(app.episode.timeline).splitlines()
        marked = [line for line in rows if "⚑" in line]
        assert [line.strip("│ ").split()[0] for line in marked] == ["2", "6"]
        await pilot.press("exclamation_mark")
        await pilot.pause()
        assert isinstance(app.screen, FindingsScreen)
        await pilot.press("down")  # the 400-as-success of turn 6 names a request
        await pilot.press("r")
        await pilot.pause()
        assert isinstance(app.screen, RequestLogScreen) and app.screen.pane.selected.request_id == "req_001"
        await pilot.press("escape")
        await pilot.press("up", "enter")  # the lost-focus of turn 2
        await settle(pilot)
        assert app.episode.turn.index == 2
        summary = app.episode.detail.message_text
        assert "finding lost-focus" in summary
        detail = app.episode.detail.summary.text  # every line of the (scrollable) summary pane
        assert "Stripe requests (1, R for the log):" in detail and "400 req_001 POST /v1/checkout/sessions" in detail


class TestSnapshots:
    def test_request_log_pane(self, snap_compare, findings_app) -> None:
        async def open_log(pilot) -> None:
            await settle(pilot)
            await pilot.press("R")
            await pilot.pause()
            await pilot.press("down", "enter")
            await pilot.pause()

        assert snap_compare(findings_app(4), terminal_size=SIZE, run_before=open_log)

    def test_findings_pane(self, snap_compare, findings_app) -> None:
        async def open_findings(pilot) -> None:
            await settle(pilot)
            await pilot.press("exclamation_mark")
            await pilot.pause()

        assert snap_compare(findings_app(6), terminal_size=SIZE, run_before=open_findings)
