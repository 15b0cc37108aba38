"""The live TUI (Pilot) on an external harness behind the gateway: its turns fill the panes, its output the service
log, and pause, step, inject and resume act on the harness's model requests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from stripebench_tui.core.operator import PAUSED
from stripebench_tui.runtime.episode import EpisodeConfig
from stripebench_tui.testing.fake_models import FakeModelServer
from stripebench_tui.tui.apps.live_app import create_live_app
from stripebench_tui.tui.widgets.service_log import ServiceLog
from tests.fixture_envs import fixture_envs  # noqa: F401  (autouse: the fixture environments)
from tests.gateway.conftest import REAL_KEY
from tests.gateway.test_external_episode import REPO, solving_script
from tests.tui_live.helpers import SIZE, trace_events, wait_for

pytestmark = pytest.mark.slow


async def test_pause_inject_step_and_resume_an_external_harness_in_the_tui(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    monkeypatch.setenv("ANTHROPIC_API_KEY", REAL_KEY)
    episode_dir = tmp_path / "ep"
    with FakeModelServer(solving_script(), api_key=REAL_KEY, variables={"workspace": str(episode_dir / "workspace")}) as fake:
        cmd = f"{sys.executable} -m stripebench_tui.testing.mini_harness {{problem}}"
        config = EpisodeConfig(env="tiny-shop", agent="command", agent_options={"cmd": cmd, "base_url": fake.url},
                               episode_dir=episode_dir, headless=False, start_paused=True)
        app = create_live_app(config)
        async with app.run_test(size=SIZE) as pilot:
            screen = app.live
            await wait_for(pilot, lambda: screen.episode.ready.is_set() and screen.live_state.status == PAUSED,
                           timeout=60, what="a paused driver")
            agent = screen.episode.agent
            await wait_for(pilot, lambda: agent.held_requests == 1, timeout=90, what="the harness's first request")
            assert fake.requests == []  # held at the gateway while paused
            await pilot.press("i")
            await pilot.press(*"use the handler module")
            await pilot.press("enter")
            await wait_for(pilot, lambda: any(op.action == "inject" for op in screen.live_state.operator_actions),
                           what="the note")
            agent_turns = lambda: sum(1 for t in screen.live_state.turns if t.calls)
            await pilot.press("s")
            await wait_for(pilot, lambda: agent_turns() == 1 and screen.episode.driver.status == PAUSED
                           and agent.held_requests == 1, timeout=60, what="one stepped turn")
            assert len(fake.requests) == 1  # the next request waits for the next step
            first = fake.requests[0].body["messages"][-1]["content"]
            assert first[-1] == {"type": "text", "text": "use the handler module"}
            call = next(t for t in screen.live_state.turns if t.calls).calls[0]
            assert call.call.tool == "write_file" and call.result is not None and call.result.output.startswith("wrote ")
            await pilot.press("space")
            await wait_for(pilot, lambda: screen.result is not None, timeout=90, what="the resumed episode to end")
            assert screen.result.passed
            log = "\n".join(screen.query_one(ServiceLog).lines)
            assert "started command" in log and "command exited with code 0" in log
            await pilot.press("q")
    events = trace_events(episode_dir / "trace.jsonl")
    assert [e["tool"] for e in events if e["type"] == "tool_call"] == ["write_file", "shell"]
    assert REAL_KEY not in (episode_dir / "trace.jsonl").read_text()
