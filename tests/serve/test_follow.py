"""Following a trace another process writes: whole lines only, from the start; the attached screen is view only."""

from __future__ import annotations

from pathlib import Path

import pytest

from stripebench_tui.core.events import EpisodeEnd
from stripebench_tui.errors import BadFileError
from stripebench_tui.tui.screens.attached import VIEW_ONLY, AttachedScreen
from stripebench_tui.tui.sources.follow import RemoteDriver, TraceFollower
from stripebench_tui.tui.sources.live_source import LiveSource
from tests.tui.episode import write_trace
from tests.tui_live.helpers import wait_for


def test_the_follower_feeds_whole_lines_as_they_are_written_and_sees_the_end(tmp_path: Path) -> None:
    whole = write_trace(tmp_path / "whole.jsonl").path.read_bytes()
    lines = whole.splitlines(keepends=True)
    growing = tmp_path / "growing.jsonl"
    growing.write_bytes(b"".join(lines[:3]) + lines[3][:10])  # the writer is half-way through line 4
    source = LiveSource()
    follower = TraceFollower(growing, source)
    assert follower.poll() == 3 and source.header is not None and follower.ended is None
    assert follower.poll() == 0  # nothing new, the half line is kept
    with open(growing, "ab") as f:
        f.write(lines[3][10:] + b"".join(lines[4:]))
    assert follower.poll() == len(lines) - 3
    assert isinstance(follower.ended, EpisodeEnd) and follower.ended.passed
    assert [t.index for t in source.state.turns] == list(range(7))
    assert source.trace_dir == tmp_path  # screenshots and sidecars resolve beside the trace


def test_a_file_that_is_not_a_trace_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json at all\n")
    with pytest.raises(BadFileError, match="not a stripebench trace"):
        TraceFollower(bad, LiveSource()).poll()
    assert TraceFollower(tmp_path / "not-yet.jsonl", LiveSource()).poll() == 0  # a live episode still setting up


def test_the_remote_driver_reads_the_waiting_call_from_the_trace() -> None:
    from stripebench_tui.core.events import Operator, ToolCall

    source = LiveSource()
    driver = RemoteDriver("http://127.0.0.1:1/control/x", source)
    assert driver.pending_call is None
    source(ToolCall(seq=1, turn=1, call_id="c1", tool="shell", arguments={"command": "ls"}))
    source(Operator(seq=2, turn=1, action="status", text="waiting_for_approval", call_id="c1"))
    call = driver.pending_call
    assert call is not None and call.call_id == "c1" and call.tool == "shell"


async def test_a_viewer_attached_to_a_running_trace_sees_it_and_cannot_steer_it(tmp_path: Path) -> None:
    from textual.app import App

    lines = write_trace(tmp_path / "whole.jsonl").path.read_bytes().splitlines(keepends=True)
    running = tmp_path / "running.jsonl"
    running.write_bytes(b"".join(lines[:-1]))  # no episode_end yet
    screen = AttachedScreen(running)

    class Host(App[None]):
        def on_mount(self) -> None:
            self.push_screen(screen)

    app = Host()
    async with app.run_test(size=(160, 45)) as pilot:
        told: list[str] = []
        screen.notify = lambda message, **_: told.append(message)  # type: ignore[method-assign]
        await wait_for(pilot, lambda: bool(screen.turns) and screen.turns[-1] == 6, what="the trace's turns")
        assert screen.following and screen.result is None
        await pilot.press("space")
        assert told and VIEW_ONLY[1:] in told[-1]
        assert VIEW_ONLY in screen.query_one("#live-status").line_text
        with open(running, "ab") as f:
            f.write(lines[-1])
        await screen._episode_worker.wait()
        assert screen.result is not None and screen.result.passed
        await pilot.press("q")


def test_a_long_trace_is_caught_up_with_in_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import stripebench_tui.tui.sources.follow as follow

    path = write_trace(tmp_path / "whole.jsonl").path
    monkeypatch.setattr(follow, "READ_CHUNK", 256)  # smaller than some lines: they arrive across polls
    follower = TraceFollower(path, LiveSource())
    fed = [follower.poll()]
    while follower.behind:
        fed.append(follower.poll())
    assert len(fed) > 3 and sum(fed) == len(path.read_bytes().splitlines()) and follower.ended is not None


@pytest.mark.parametrize("control_url", [None, "http://127.0.0.1:9/control/token"], ids=["viewer", "operator"])
async def test_serve_present_opens_the_live_presenter_for_viewers_and_the_operator(tmp_path: Path,
                                                                                   control_url: str | None) -> None:
    from stripebench_tui.tui.apps.serve_app import ServeApp
    from stripebench_tui.tui.screens.live_presenter import LivePresenterScreen

    lines = write_trace(tmp_path / "whole.jsonl").path.read_bytes().splitlines(keepends=True)
    running = tmp_path / "running.jsonl"
    running.write_bytes(b"".join(lines[:-1]))  # a live episode: no episode_end yet
    app = ServeApp("attach", running, control_url=control_url, present=True, speed=4.0)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, LivePresenterScreen), what="presenter mode at start")
        presenter = app.screen
        await wait_for(pilot, lambda: presenter.is_mounted and presenter.turns[-1:] == [6],
                       what="the trace's turns in the presenter")
        assert presenter.query_one("#p-timeline").border_title == "Turns (live)" and presenter.pacer.speed == 4.0
        # P leaves it, back on the attached live screen (viewer or operator); P opens it again.
        await pilot.press("P")
        await wait_for(pilot, lambda: isinstance(app.screen, AttachedScreen), what="the attached live screen")
        attached = app.screen
        assert attached.operator is (control_url is not None)
        await pilot.press("P")
        await wait_for(pilot, lambda: isinstance(app.screen, LivePresenterScreen) and app.screen is not presenter
                       and app.screen.is_mounted, what="presenter mode again")
        assert app.screen.turns == attached.turns
        await pilot.press("P")
        await wait_for(pilot, lambda: app.screen is attached, what="the attached live screen again")
        await pilot.press("q")
