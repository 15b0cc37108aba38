"""While an episode runs live, an open request log (R) or findings screen (!) lists new events as they arrive."""

from __future__ import annotations

import asyncio

from textual.app import App

from stripebench_tui.core.events import Finding, ModelMessage, StripeRequest
from stripebench_tui.tui.screens.findings_screen import FindingsScreen
from stripebench_tui.tui.screens.live_screen import LiveEpisodeScreen
from stripebench_tui.tui.screens.request_log_screen import RequestLogScreen
from tests.tui.conftest import SIZE

TIMEOUT = 30.0


class FakeEpisode:
    """Just enough of ``runtime.Episode`` for the live screen: no sandbox; ``run`` lasts until ``end`` is set."""

    def __init__(self, source) -> None:  # type: ignore[no-untyped-def]
        self.source = source  # the screen's LiveSource: the test publishes into it, as the bus would
        self.sandbox = self.recorder = self.driver = None
        self.ready = asyncio.Event()
        self.ready.set()
        self.end = asyncio.Event()

    async def run(self):  # type: ignore[no-untyped-def]
        await self.end.wait()
        return None

    def stop(self) -> None:
        self.end.set()


class Host(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.live: LiveEpisodeScreen | None = None
        self.episodes: list[FakeEpisode] = []

    def on_mount(self) -> None:
        def make(source):  # type: ignore[no-untyped-def]
            self.episodes.append(FakeEpisode(source))
            return self.episodes[-1]

        self.live = LiveEpisodeScreen(make, exit_app_on_quit=False)
        self.push_screen(self.live)


async def until(pilot, cond, what: str) -> None:  # type: ignore[no-untyped-def]
    """Let the app run (its redraw interval) until ``cond()`` holds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while not cond():
        assert loop.time() < deadline, f"timed out waiting for {what}"
        await pilot.pause(0.02)


def _request(n: int, status: int = 200) -> StripeRequest:
    return StripeRequest(seq=0, t=float(n), turn=1, request_id=f"req_{n}", method="POST", path="/v1/customers",
                         status=status, source="agent")


async def test_an_open_request_log_and_findings_screen_list_new_events() -> None:
    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.live is not None and app.live.is_mounted, "the live screen")
        publish = app.episodes[0].source
        publish(ModelMessage(seq=1, t=0.5, turn=1, text="making a customer"))
        publish(_request(1))
        await until(pilot, lambda: app.live.turns == [1], "the first turn")
        await pilot.press("R")
        await until(pilot, lambda: isinstance(app.screen, RequestLogScreen), "the request log")
        log = app.screen
        assert [r.request_id for r in log.pane.shown] == ["req_1"]
        publish(_request(2, status=402))
        await until(pilot, lambda: log.pane.table.row_count == 2, "the new request in the open log")
        assert [r.request_id for r in log.pane.shown] == ["req_1", "req_2"]
        assert "2 of 2" in str(log.pane.border_title)
        # A filter stays in force for what arrives later.
        log.pane.apply_filter("4xx")
        publish(_request(3, status=200))
        publish(_request(4, status=400))
        await until(pilot, lambda: len(log.pane.requests) == 4, "the later requests")
        assert [r.request_id for r in log.pane.shown] == ["req_2", "req_4"]
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.live, "the live screen again")

        await pilot.press("exclamation_mark")
        await until(pilot, lambda: isinstance(app.screen, FindingsScreen), "the findings screen")
        found = app.screen
        assert found.query_one("#findings-table").row_count == 0
        publish(Finding(seq=0, t=4.5, turn=1, detector="400-as-success", message="done after a 400",
                        evidence=[{"request_id": "req_4"}]))
        await until(pilot, lambda: found.query_one("#findings-table").row_count == 1, "the new finding")
        assert [f.detector for f in found.findings] == ["400-as-success"]
        app.episodes[0].stop()
