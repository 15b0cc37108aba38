"""Pilot tests of the live app on the tiny-shop fixture: panes, controls, approval, stop."""

from __future__ import annotations

from pathlib import Path

import pytest

from stripebench_tui.core.operator import PAUSED, RUNNING, WAITING_FOR_APPROVAL
from stripebench_tui.runtime.reaper import tagged_pids
from stripebench_tui.tui.apps.live_app import create_live_app
from stripebench_tui.tui.widgets.live_status import LiveStatusBar
from stripebench_tui.tui.widgets.service_log import ServiceLog

from .helpers import SIZE, config, trace_events, wait_for

pytestmark = pytest.mark.slow


def _tag(trace: Path) -> str:
    import json

    return json.loads(trace.read_text().splitlines()[0])["extra"]["process_tag"]


async def test_panes_fill_in_as_events_arrive_and_follow_the_newest_turn(tmp_path: Path) -> None:
    app = create_live_app(config(tmp_path))
    seen_rows: list[int] = []
    async with app.run_test(size=SIZE) as pilot:
        screen = app.live
        assert screen is not None

        def progressed() -> bool:
            seen_rows.append(len(screen.turns or []))
            return screen.result is not None

        await wait_for(pilot, progressed, what="the episode to end")
        await pilot.pause(0.3)
        state = screen.live_state
        # Rows appeared one after another, not all at once at the end.
        assert len(set(seen_rows)) >= 3
        assert screen.turns == [t.index for t in state.turns] and len(screen.turns) >= 4
        assert screen.turn is not None and screen.turn.index == screen.turns[-1]  # followed the newest turn
        assert screen.query_one(ServiceLog).line_count >= 2  # seed and app lines
        assert "app" in "\n".join(screen.query_one(ServiceLog).lines)
        assert state.verdicts and screen.result.passed
        bar = screen.query_one(LiveStatusBar).line_text
        assert f"turn {screen.turns[-1]}/{screen.turns[-1]}" in bar and "ended: agent_done" in bar
        assert "tiny-shop · oracle · local (not confined)" in bar  # a local run says it was not confined
        # Moving away stops the follow; the follow key returns to the newest turn.
        await pilot.press("home")
        assert not screen.following and screen.turn.index == 0
        assert "f: follow" not in screen.query_one(LiveStatusBar).line_text  # ended: nothing to follow
        await pilot.press("f")
        assert screen.following and screen.turn.index == screen.turns[-1]
        # The request log pane lists the live bus's requests (the seed's, the app's, the graders').
        await pilot.press("R")
        await pilot.pause()
        from stripebench_tui.tui.screens.request_log_screen import RequestLogScreen

        assert isinstance(app.screen, RequestLogScreen)
        assert app.screen.pane.table.row_count == len(state.requests) > 0
        assert any(r.path == "/v1/customers" and r.method == "POST" for r in app.screen.pane.shown)
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("q")
    assert app.return_value is not None and app.return_value.passed


async def test_pause_step_and_resume_change_the_drivers_status(tmp_path: Path) -> None:
    app = create_live_app(config(tmp_path, start_paused=True))
    async with app.run_test(size=SIZE) as pilot:
        screen = app.live
        await wait_for(pilot, lambda: screen.episode.ready.is_set() and screen.live_state.status == PAUSED,
                       what="a paused driver")
        assert screen.episode.driver.status == PAUSED
        await wait_for(pilot, lambda: "paused" in screen.query_one(LiveStatusBar).line_text, what="the status line")
        agent_turns = lambda: sum(1 for t in screen.live_state.turns if t.calls)
        assert agent_turns() == 0
        # While paused, one of the environment's hints (from its manifest) is picked from the inject dialog.
        await pilot.press("i")
        await pilot.pause(0.2)
        await pilot.press("tab", "enter")
        hint = "The handler module is reloaded on every request; no restart needed."
        await wait_for(pilot, lambda: any(op.action == "inject" for op in screen.live_state.operator_actions),
                       what="the hint")
        injected = next(op for op in screen.live_state.operator_actions if op.action == "inject")
        assert injected.text == hint and injected.details == {"kind": "hint"}
        await pilot.press("s")
        await wait_for(pilot, lambda: agent_turns() == 1 and screen.episode.driver.status == PAUSED,
                       what="one stepped turn")
        await pilot.pause(0.5)
        assert agent_turns() == 1  # still paused after the step
        await pilot.press("space")
        await wait_for(pilot, lambda: screen.result is not None, what="the resumed episode to end")
        statuses = [e["text"] for e in trace_events(screen.result.trace_path)
                    if e["type"] == "operator" and e["action"] == "status"]
        assert statuses[:4] == [PAUSED, RUNNING, PAUSED, RUNNING]
        actions = [e["action"] for e in trace_events(screen.result.trace_path) if e["type"] == "operator"]
        assert "step" in actions and "resume" in actions
        await pilot.press("q")


async def test_inject_reaches_the_human_agent_and_the_trace(tmp_path: Path) -> None:
    app = create_live_app(config(tmp_path, agent="human"))
    async with app.run_test(size=SIZE) as pilot:
        screen = app.live
        await wait_for(pilot, lambda: screen.episode.ready.is_set() and screen.live_state.status == RUNNING,
                       what="the driver")
        await pilot.press("i")
        await pilot.press(*"look at app.py")
        await pilot.press("enter")
        # The human agent's turn: the tool picker and JSON arguments.
        await pilot.press("t")
        await pilot.pause(0.2)
        from textual.widgets import TextArea

        await pilot.press(*"view_fi", "right", "enter")  # completion, then Enter fills in the arguments
        area = app.screen.query_one(TextArea)
        assert '"path": ""' in area.text and area.has_focus
        area.text = '{"path": "app.py"}'
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: any(c.result for t in screen.live_state.turns for c in t.calls),
                       what="the typed call's result")
        await pilot.press("t")
        await pilot.pause(0.2)
        await pilot.press(*"done", "enter")
        await wait_for(pilot, lambda: screen.result is not None, what="the end")
        agent = screen.episode.agent
        # The turn after the inject saw it, beside the typed call's result.
        assert [o.kind for o in agent.observations] == ["tool_result", "operator_message"]
        assert agent.observations[1].text == "look at app.py"
        events = trace_events(screen.result.trace_path)
        assert any(e["type"] == "operator" and e["action"] == "inject" and e["text"] == "look at app.py" for e in events)
        assert any(e["type"] == "model_message" and e["role"] == "operator" and e["text"] == "look at app.py"
                   for e in events)
        call = next(e for e in events if e["type"] == "tool_call")
        assert call["tool"] == "view_file" and call["arguments"] == {"path": "app.py"}
        await pilot.press("q")


async def test_approve_edit_and_reject_the_waiting_call(tmp_path: Path) -> None:
    app = create_live_app(config(tmp_path, approval="always"))
    async with app.run_test(size=SIZE) as pilot:
        screen = app.live
        waiting = lambda: screen.live_state.status == WAITING_FOR_APPROVAL
        await wait_for(pilot, waiting, what="the first call to wait")
        await wait_for(pilot, lambda: "waiting for approval" in screen.query_one(LiveStatusBar).line_text,
                       what="the status line")
        first = screen.episode.driver.pending_call
        await pilot.press("a")
        await wait_for(pilot, lambda: waiting() and screen.episode.driver.pending_call.call_id != first.call_id,
                       what="the second call")
        second = screen.episode.driver.pending_call
        await pilot.press("r")
        await pilot.press(*"not now")
        await pilot.press("enter")
        await wait_for(pilot, lambda: waiting() and screen.episode.driver.pending_call.call_id != second.call_id,
                       what="the third call")
        third = screen.episode.driver.pending_call
        await pilot.press("e")
        await pilot.pause(0.2)
        from textual.widgets import TextArea

        app.screen.query_one(TextArea).text = '{"command": "echo edited"}'
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: any(c.call.call_id == third.call_id and c.result for t in screen.live_state.turns
                                          for c in t.calls), what="the edited call's result")
        await pilot.press("X")
        await wait_for(pilot, lambda: screen.result is not None, what="the stop")
        events = trace_events(screen.result.trace_path)
        ops = {(e["action"], e["call_id"]): e for e in events if e["type"] == "operator"}
        assert ("approve", first.call_id) in ops
        assert ops[("reject", second.call_id)]["text"] == "not now" or "not now" in str(ops[("reject", second.call_id)])
        assert ops[("edit", third.call_id)]["details"]["arguments"] == {"command": "echo edited"}
        results = {e["call_id"]: e for e in events if e["type"] == "tool_result"}
        assert first.call_id in results and second.call_id not in results
        assert "edited" in results[third.call_id]["output"]
        await pilot.press("q")


async def test_quit_stops_the_episode_and_leaves_no_process(tmp_path: Path) -> None:
    app = create_live_app(config(tmp_path, start_paused=True))
    async with app.run_test(size=SIZE) as pilot:
        screen = app.live
        await wait_for(pilot, lambda: screen.episode.ready.is_set(), what="the driver")
        trace = Path(screen.trace_path())
        tag = _tag(trace)
        assert tagged_pids(tag)  # the app service is running
        # The live controls are data: the same table feeds the keys, the help screen and the palette.
        from stripebench_tui.tui.screens.help_screen import HelpScreen

        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        titles = [row[1] for row in app.screen.rows]
        assert {"Pause/Resume", "Step agent", "Inject", "Approve", "Edit", "Reject", "Fork", "Stop"} <= set(titles)
        await pilot.press("escape")
        palette = {c.title for c in app.get_system_commands(screen)}
        assert {"Pause/Resume", "Approve", "Follow", "Fork"} <= palette
        await pilot.press("q")
    result = app.return_value
    assert result is not None and result.reason == "stopped"
    assert trace.is_file() and trace_events(trace)[-1]["type"] == "episode_end"
    assert tagged_pids(tag) == []


async def test_quit_during_setup_stops_it_and_keeps_the_trace(tmp_path: Path) -> None:
    app = create_live_app(config(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        screen = app.live
        await wait_for(pilot, lambda: screen.live_state.service_log, what="setup to begin")
        await wait_for(pilot, lambda: "setting up" in screen.query_one(LiveStatusBar).line_text, what="setup progress")
        assert not screen.episode.ready.is_set()
        trace = Path(screen.trace_path())
        tag = _tag(trace)
        await pilot.press("q")
    result = app.return_value
    assert result is not None and result.reason == "stopped" and not result.setup_failed
    assert trace_events(trace)[-1]["type"] == "episode_end"
    assert tagged_pids(tag) == []


async def test_a_service_that_dies_at_import_says_its_error_on_the_status_line(tmp_path: Path) -> None:
    from stripebench_tui.runtime.episode import EpisodeConfig
    from tests.envdeps_env import make_env

    env = make_env(tmp_path / "envs", None, app_imports="import no_such_module_for_stripebench as sbfixture_dep",
                   seed="", top='requirements = ""')
    app = create_live_app(EpisodeConfig(env=env, agent="noop", episode_dir=tmp_path / "ep", headless=False))
    wanted = "ModuleNotFoundError: No module named 'no_such_module_for_stripebench'"
    async with app.run_test(size=SIZE) as pilot:
        screen = app.live
        await wait_for(pilot, lambda: wanted in screen.query_one(LiveStatusBar).line_text, what="the error on the status line")
        assert "ended: error" in screen.query_one(LiveStatusBar).line_text
        await pilot.press("q")
    assert app.return_value is not None and app.return_value.setup_failed


async def test_the_status_line_shows_the_dependency_install_while_it_runs(tmp_path: Path, monkeypatch) -> None:
    from stripebench_tui.runtime.episode import EpisodeConfig
    from tests.envdeps_env import make_env, wheel

    monkeypatch.setenv("STRIPEBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    env = make_env(tmp_path / "envs", f"--find-links {wheel(tmp_path / 'wheels')}\nsbfixture-dep==1.0\n")
    app = create_live_app(EpisodeConfig(env=env, agent="noop", episode_dir=tmp_path / "ep", headless=False))
    async with app.run_test(size=SIZE) as pilot:
        screen = app.live
        await wait_for(pilot, lambda: "setting up: installing dependencies" in screen.query_one(LiveStatusBar).line_text,
                       what="the dependency install on the status line")
        await wait_for(pilot, lambda: screen.result is not None, timeout=120, what="the episode to end")
        await pilot.press("q")
    result = app.return_value
    assert result is not None and not result.setup_failed, result.error
