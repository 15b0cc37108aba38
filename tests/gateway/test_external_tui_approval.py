"""The live TUI (Pilot) with ``--approve shell`` on an external harness: the approval prompt appears for its call,
which is held at the gateway (it has not run), and the approve key releases it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from stripebench_tui.core.operator import WAITING_FOR_APPROVAL
from stripebench_tui.runtime.episode import EpisodeConfig
from stripebench_tui.testing.fake_models import FakeModelServer
from stripebench_tui.tui.apps.live_app import create_live_app
from stripebench_tui.tui.widgets.live_status import LiveStatusBar
from tests.fixture_envs import fixture_envs  # noqa: F401  (autouse: the fixture environments)
from tests.gateway.conftest import REAL_KEY
from tests.gateway.test_external_episode import REPO, solving_script
from tests.tui_live.helpers import SIZE, trace_events, wait_for

pytestmark = pytest.mark.slow


async def test_the_approval_prompt_holds_an_external_call_until_approved(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO), str(REPO / "emulator")]))
    monkeypatch.setenv("ANTHROPIC_API_KEY", REAL_KEY)
    episode_dir = tmp_path / "ep"
    submission = episode_dir / "workspace" / "submission.txt"
    with FakeModelServer(solving_script(), api_key=REAL_KEY, variables={"workspace": str(episode_dir / "workspace")}) as fake:
        cmd = f"{sys.executable} -m stripebench_tui.testing.mini_harness {{problem}}"
        config = EpisodeConfig(env="tiny-shop", agent="command", agent_options={"cmd": cmd, "base_url": fake.url},
                               episode_dir=episode_dir, headless=False, approval="shell")
        app = create_live_app(config)
        async with app.run_test(size=SIZE) as pilot:
            screen = app.live
            await wait_for(pilot, lambda: screen.live_state.status == WAITING_FOR_APPROVAL, timeout=90,
                           what="the harness's shell call to wait for approval")
            await wait_for(pilot, lambda: "shell: a approve" in screen.query_one(LiveStatusBar).line_text,
                           what="the approval prompt")
            call = screen.episode.driver.pending_call
            assert call.tool == "shell" and not submission.exists()  # held at the gateway: the harness has not run it
            await pilot.press("a")
            await wait_for(pilot, lambda: screen.result is not None, timeout=90, what="the approved episode to end")
            assert screen.result.passed and submission.read_text().startswith("cus_")
            await pilot.press("q")
    events = trace_events(episode_dir / "trace.jsonl")
    assert [(e["action"], e["call_id"]) for e in events if e["type"] == "operator" and e["action"] == "approve"] == [
        ("approve", call.call_id)]
