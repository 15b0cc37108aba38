"""`replay --fork-at N --agent-cmd …` and `replay --rerun` of an external harness's episode, through its model recording."""

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
from tests.gateway.test_external_episode import SIGN_UP, solving_script

pytestmark = [pytest.mark.slow, pytest.mark.drill]
REPO = Path(__file__).resolve().parents[2]
HARNESS = f"{sys.executable} -m stripebench_tui.testing.mini_harness {{problem}}"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "STRIPE_SECRET"))}
    return {**env, "PYTHONPATH": str(REPO), "STRIPEBENCH_ENVIRONMENTS": str(FIXTURES),
            "STRIPEBENCH_GRADERS": str(FIXTURES / "graders"), **extra}


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "stripebench_tui", *args], capture_output=True, text=True, timeout=240,
                          env=env, cwd=REPO)


def _events(episode: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (episode / "trace.jsonl").read_text().splitlines()]


def _record(episode: Path, turns: list[ScriptedTurn]) -> subprocess.CompletedProcess:
    fake = FakeModelServer(turns, api_key=REAL_KEY, variables={"workspace": str(episode / "workspace")})
    with fake:
        return _cli("run", "tiny-shop", "--headless", "--agent-cmd", HARNESS, "--base-url", fake.url, "--episode-dir",
                    str(episode), env=_env(ANTHROPIC_API_KEY=REAL_KEY))


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An episode of the mini harness solving tiny-shop (3 turns), recorded through the gateway."""
    episode = tmp_path_factory.mktemp("recorded") / "episode"
    done = _record(episode, solving_script())
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    return episode


def test_a_fork_re_executes_turns_1_to_n_from_the_recording_then_goes_live(recorded: Path, tmp_path: Path) -> None:
    fork = tmp_path / "fork"
    rest = [ScriptedTurn(text="Sign up Alice.", tool_calls=[ScriptedCall("shell", {"command": SIGN_UP})]),
            ScriptedTurn(text="Finished, another way.")]
    with FakeModelServer(rest, api_key=REAL_KEY) as live:
        done = _cli("replay", str(recorded), "--fork-at", "1", "--agent-cmd", HARNESS, "--base-url", live.url, "--headless",
                    "--episode-dir", str(fork), env=_env(ANTHROPIC_API_KEY=REAL_KEY))
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
        asked = [r for r in live.requests if r.protocol == "anthropic"]
    assert len(asked) == 2  # turn 1 came from the recording; turns 2 and 3 from the live model
    # ... and the harness made turn 1's call again itself, in the new workspace (the recorded path mapped onto it)
    result = asked[0].body["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and result["content"] == f"wrote {fork / 'workspace' / 'handlers.py'}"
    assert (fork / "workspace" / "handlers.py").read_text() == (FIXTURES / "tiny-shop" / "solution" / "handlers.py").read_text()
    events = _events(fork)
    assert events[0]["extra"]["forked_from"] == {"trace": str((recorded / "trace.jsonl").resolve()), "turn": 1}
    verdicts = [(e["details"]["diverged"], e["text"]) for e in events if e["type"] == "operator" and e["action"] == "divergence"]
    assert verdicts == [(False, "re-executed 1 turns from the model recording: no divergence"),
                        (True, "turn 3: the live model's reply differs from the recording (text)")]
    assert "divergence: turn 3: the live model's reply differs from the recording (text)" in done.stderr
    assert events[-1]["type"] == "episode_end" and events[-1]["passed"] is True
    sources = [json.loads(line)["source"] for line in (fork / "model" / "exchanges.jsonl").read_text().splitlines()]
    assert sources == ["recording", "upstream", "upstream"]
    for path in [fork / "trace.jsonl", *(fork / "model").iterdir(), *(recorded / "model").iterdir()]:
        assert REAL_KEY not in path.read_text(), path


def test_a_rerun_replays_the_whole_episode_offline_with_the_same_tool_calls(recorded: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    done = _cli("replay", str(recorded / "trace.jsonl"), "--rerun", "--headless", "--episode-dir", str(again), env=_env())
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "divergence: none" in done.stderr

    def calls(episode: Path) -> list[tuple[str, str]]:
        return [(e["tool"], json.dumps(e["arguments"]).replace(str(episode), "EPISODE"))
                for e in _events(episode) if e["type"] == "tool_call"]

    assert calls(again) == calls(recorded) and [t for t, _ in calls(again)] == ["write_file", "shell"]
    results = [e["output"] for e in _events(again) if e["type"] == "tool_result"]
    assert results == [e["output"].replace(str(recorded), str(again)) for e in _events(recorded) if e["type"] == "tool_result"]
    events = _events(again)
    assert events[0]["extra"]["forked_from"]["turn"] == "all"
    assert events[-1]["reason"] == "agent_done" and events[-1]["passed"] is True


def test_a_rerun_reports_the_first_tool_result_that_differs(tmp_path: Path) -> None:
    episode, again = tmp_path / "episode", tmp_path / "again"
    turns = [ScriptedTurn(text="A fresh id.",
                          tool_calls=[ScriptedCall("shell", {"command": "python -c 'import uuid; print(uuid.uuid4())'"})]),
             ScriptedTurn(text="Done.")]
    _record(episode, turns)
    done = _cli("replay", str(episode), "--rerun", "--headless", "--episode-dir", str(again), env=_env())
    assert "divergence: turn 1: shell result differs from the recording (output)" in done.stderr, done.stderr[-2000:]
    divergence = next(e for e in _events(again) if e["type"] == "operator" and e["action"] == "divergence")
    recorded = next(e["output"] for e in _events(episode) if e["type"] == "tool_result")
    assert divergence["turn"] == 1 and divergence["details"]["recorded_output"] == recorded
    assert divergence["details"]["new_output"] != recorded and len(divergence["details"]["new_output"]) == 36


def test_forking_an_episode_without_a_model_recording_is_one_line(tmp_path: Path) -> None:
    done = _cli("replay", "replays/checkout-migration-400", "--fork-at", "1", "--agent-cmd", HARNESS, "--headless",
                "--episode-dir", str(tmp_path / "fork"),
                env={**_env(), "STRIPEBENCH_ENVIRONMENTS": "", "STRIPEBENCH_GRADERS": ""})
    assert done.returncode == 2
    line = done.stderr.strip()
    assert "\n" not in line and "no model recording beside it" in line and "only episodes of an external harness" in line
    assert not (tmp_path / "fork").exists()


def test_a_fork_with_no_live_upstream_ends_where_the_recording_does(recorded: Path, tmp_path: Path) -> None:
    fork = tmp_path / "fork"
    done = _cli("replay", str(recorded), "--fork-at", "1", "--agent-cmd", HARNESS, "--headless", "--episode-dir", str(fork),
                env=_env())
    assert "divergence: none" in done.stderr, done.stdout[-3000:] + done.stderr[-2000:]
    assert [e["tool"] for e in _events(fork) if e["type"] == "tool_call"] == ["write_file"]
    ends = [e for e in _events(fork) if e["type"] == "episode_end"]
    assert len(ends) == 1 and ends[0]["reason"] == "agent_done" and ends[0]["passed"] is False
    logged = [e["text"] for e in _events(fork) if e["type"] == "service" and e["service"] == "command"]
    assert "the model recording ends after turn 1 and there is no live upstream: the episode ends here" in logged
