"""`stripebench run ENV --agent-cmd …`: an external harness solves the tiny-shop fixture through the gateway, graded and
replayable."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stripebench_tui.testing.fake_models import FakeModelServer
from stripebench_tui.testing.fake_wire import ScriptedCall, ScriptedTurn
from tests.fixture_envs import FIXTURES, fixture_envs  # noqa: F401  (autouse: the fixture environments)
from tests.gateway.conftest import REAL_KEY

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
SIGN_UP = ("python -c \"import os, sys, urllib.request; sys.stdout.write(urllib.request.urlopen(urllib.request.Request("
           "os.environ['APP_URL'] + '/subscribe?email=alice@example.com', method='POST')).read().decode())\" "
           "> submission.txt && cat submission.txt")


def solving_script() -> list[ScriptedTurn]:
    handlers = (FIXTURES / "tiny-shop" / "solution" / "handlers.py").read_text()
    return [
        ScriptedTurn(text="Implement the handler.", tool_calls=[ScriptedCall("write_file", {"path": "{workspace}/handlers.py",
                                                                                            "content": handlers})]),
        ScriptedTurn(text="Sign up Alice.", tool_calls=[ScriptedCall("shell", {"command": SIGN_UP})]),
        ScriptedTurn(text="Done: Alice's customer id is in submission.txt."),
    ]


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "stripebench_tui", *args], capture_output=True, text=True, timeout=240,
                          env=env, cwd=REPO)


def test_an_external_harness_solves_tiny_shop_and_the_trace_replays(tmp_path: Path) -> None:
    episode = tmp_path / "episode"
    with FakeModelServer(solving_script(), api_key=REAL_KEY, variables={"workspace": str(episode / "workspace")}) as fake:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "emulator")]), "ANTHROPIC_API_KEY": REAL_KEY}
        cmd = f"{sys.executable} -m stripebench_tui.testing.mini_harness {{problem}}"
        done = _cli("run", "tiny-shop", "--headless", "--agent-cmd", cmd, "--base-url", fake.url,
                    "--episode-dir", str(episode), env=env)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
        assert len(fake.answered()) == 3
    trace = episode / "trace.jsonl"
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    assert [e["tool"] for e in events if e["type"] == "tool_call"] == ["write_file", "shell"]
    results = [e for e in events if e["type"] == "tool_result"]
    assert results[1]["output"].startswith("cus_")
    end = events[-1]
    assert end["type"] == "episode_end" and end["reason"] == "agent_done" and end["passed"] is True and end["score"] == 1.0
    assert any(e["type"] == "service" and e["service"] == "command" and e["text"] == "done" for e in events)
    assert REAL_KEY not in trace.read_text()
    summary = _cli("replay", str(trace), "--summary",
                   env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "emulator")])})
    assert summary.returncode == 0, summary.stderr
    assert "write_file" in summary.stdout and "shell" in summary.stdout


def test_agent_cmd_with_another_agent_is_one_line(tmp_path: Path) -> None:
    done = _cli("run", "tiny-shop", "--headless", "--agent", "noop", "--agent-cmd", "x {problem}",
                env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "emulator")])})
    assert done.returncode == 2
    assert done.stderr.strip() == "stripebench: --agent-cmd runs its own harness; it cannot be combined with --agent noop"
