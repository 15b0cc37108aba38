"""A real Claude Code episode recorded through the gateway, forked at turn N onto another script, and re-run offline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from stripebench_tui.testing.fake_models import FakeModelServer
from stripebench_tui.testing.fake_wire import ScriptedCall, ScriptedTurn
from tests.fixture_envs import FIXTURES
from tests.gateway.conftest import REAL_KEY
from tests.gateway.test_claude_code import claude_code  # noqa: F401  (the pinned install, a fixture)
from tests.gateway.test_external_episode import SIGN_UP

pytestmark = [pytest.mark.slow, pytest.mark.node, pytest.mark.drill]
REPO = Path(__file__).resolve().parents[2]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "CLAUDE_", "STRIPE_SECRET"))}
    return {**env, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "emulator")]), "STRIPEBENCH_ENVIRONMENTS": str(FIXTURES),
            "STRIPEBENCH_GRADERS": str(FIXTURES / "graders"), **extra}


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "stripebench_tui", *args], capture_output=True, text=True, timeout=300,
                          env=env, cwd=REPO)


def _events(episode: Path, kind: str) -> list[dict[str, Any]]:
    return [e for e in map(json.loads, (episode / "trace.jsonl").read_text().splitlines()) if e["type"] == kind]


def test_a_claude_code_episode_forks_at_turn_2_onto_another_script_and_re_runs_offline(claude_code: str,  # noqa: F811 - pytest fixtures imported above, requested by name
                                                                                      tmp_path: Path) -> None:
    recorded, fork, again = tmp_path / "recorded", tmp_path / "fork", tmp_path / "again"
    handlers = (FIXTURES / "tiny-shop" / "solution" / "handlers.py").read_text()
    turns = [
        ScriptedTurn(text="Let me read the handlers.",
                     tool_calls=[ScriptedCall("Read", {"file_path": "{workspace}/handlers.py"})]),
        ScriptedTurn(text="I'll implement the handler.",
                     tool_calls=[ScriptedCall("Write", {"file_path": "{workspace}/handlers.py", "content": handlers})]),
        ScriptedTurn(text="Say which API it uses.", tool_calls=[ScriptedCall("Edit", {
            "file_path": "{workspace}/handlers.py", "old_string": "Request handlers of the tiny shop.",
            "new_string": "Request handlers of the tiny shop (Stripe customers API)."})]),
        ScriptedTurn(text="Now sign up Alice.",
                     tool_calls=[ScriptedCall("Bash", {"command": SIGN_UP, "description": "Sign up"})]),
        ScriptedTurn(text="Done: Alice's customer id is in submission.txt."),
    ]
    with FakeModelServer(turns, api_key=REAL_KEY, variables={"workspace": str(recorded / "workspace")}) as fake:
        done = _cli("run", "tiny-shop", "--headless", "--agent", "claude-code", "--base-url", fake.url, "--model",
                    "claude-sonnet-4-5", "--episode-dir", str(recorded), env=_env(ANTHROPIC_API_KEY=REAL_KEY))
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert [e["tool"] for e in _events(recorded, "tool_call")] == ["Read", "Write", "Edit", "Bash"]

    # Fork at turn 2: turns 1-2 from the recording, the rest from a model that skips the Edit.
    rest = [ScriptedTurn(text="Sign up Alice right away.", tool_calls=[ScriptedCall("Bash", {"command": SIGN_UP,
                                                                                          "description": "Sign up"})]),
            ScriptedTurn(text="Done.")]
    with FakeModelServer(rest, api_key=REAL_KEY) as live:
        done = _cli("replay", str(recorded), "--fork-at", "2", "--agent", "claude-code", "--base-url", live.url, "--model",
                    "claude-sonnet-4-5", "--headless", "--episode-dir", str(fork), env=_env(ANTHROPIC_API_KEY=REAL_KEY))
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
        asked = [r for r in live.requests if r.protocol == "anthropic"]
    assert len(asked) == 2  # none for turns 1-2: Claude Code re-executed them against the recording
    sent_back = [b for m in asked[0].body["messages"] for b in (m["content"] if isinstance(m["content"], list) else [])
                 if isinstance(b, dict) and b.get("type") == "tool_result"]
    assert len(sent_back) == 2 and str(fork / "workspace" / "handlers.py") in json.dumps(sent_back[1])
    assert [e["tool"] for e in _events(fork, "tool_call")] == ["Read", "Write", "Bash"]
    verdicts = [(e["details"]["diverged"], e["text"]) for e in _events(fork, "operator") if e["action"] == "divergence"]
    assert verdicts == [(False, "re-executed 2 turns from the model recording: no divergence"),
                        (True, "turn 3: the live model's reply differs from the recording (text, tool calls)")]
    end = _events(fork, "episode_end")[0]
    assert end["passed"] is True and end["score"] == 1.0
    assert _events(fork, "header")[0]["extra"]["forked_from"]["turn"] == 2

    # The whole recorded episode again with no upstream at all: the same tool calls, offline.
    done = _cli("replay", str(recorded), "--rerun", "--headless", "--episode-dir", str(again), env=_env())
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "divergence: none" in done.stderr
    calls = [(e["tool"], json.dumps(e["arguments"]).replace(str(again), "EP")) for e in _events(again, "tool_call")]
    assert calls == [(e["tool"], json.dumps(e["arguments"]).replace(str(recorded), "EP")) for e in _events(recorded, "tool_call")]
    assert "customers API" in (again / "workspace" / "handlers.py").read_text()
    for episode in (recorded, fork, again):
        for path in [episode / "trace.jsonl", *(episode / "model").iterdir()]:
            assert REAL_KEY not in path.read_text(), path
