"""A headless `stripebench run` interrupted (SIGINT) or killed (SIGKILL): the trace stays readable, no process stays."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stripebench_tui.core.trace import open_trace
from stripebench_tui.runtime.reaper import tagged_pids

from .helpers import process_tag, trace_lines

pytestmark = pytest.mark.slow


def _start(tmp_path: Path, *args: str) -> tuple[subprocess.Popen, Path]:
    episode = tmp_path / "ep"
    proc = subprocess.Popen(
        [sys.executable, "-m", "stripebench_tui", "run", "tiny-shop", "--headless", "--episode-dir", str(episode), *args],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ),
    )
    return proc, episode / "trace.jsonl"


def _wait_for(condition, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.05)


def _has(trace: Path, predicate) -> bool:
    return trace.exists() and any(predicate(line) for line in trace_lines(trace)[1:])


def _gone(tag: str, timeout: float = 10.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while tagged_pids(tag) and time.monotonic() < deadline:
        time.sleep(0.1)
    return tagged_pids(tag)


def _human_started_background_job(proc: subprocess.Popen, trace: Path) -> str:
    # Wait for the agent's first turn, then have the human start a long background job through the shell tool.
    _wait_for(lambda: _has(trace, lambda e: e["type"] == "service" and e.get("status") == "healthy"))
    proc.stdin.write('shell {"command": "sleep 300", "background": true}\n')
    proc.stdin.flush()
    _wait_for(lambda: _has(trace, lambda e: e["type"] == "tool_result" and "background job" in e.get("output", "")))
    tag = process_tag(trace)
    assert len(tagged_pids(tag)) >= 3  # the app, the tool servers and the sleep
    return tag


def test_ctrl_c_stops_the_episode_and_every_process(tmp_path: Path) -> None:
    proc, trace = _start(tmp_path, "--agent", "human")
    try:
        tag = _human_started_background_job(proc, trace)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1, err
    assert "stopping the episode" in err and f"trace: {trace}" in err
    lines = trace_lines(trace)
    assert lines[-1]["type"] == "episode_end" and lines[-1]["reason"] == "stopped"
    assert any(line.get("action") == "stop" for line in lines)
    assert "episode ended: stopped" in out
    assert _gone(tag) == []


def test_kill_9_keeps_a_readable_trace_and_the_watchdog_reaps(tmp_path: Path) -> None:
    proc, trace = _start(tmp_path, "--agent", "human")
    try:
        tag = _human_started_background_job(proc, trace)
        proc.kill()
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert _gone(tag) == []
    events = list(open_trace(trace).iter_events())
    assert events and events[-1].type != "episode_end"
    assert any(e.type == "tool_result" for e in events)


def test_unknown_env_and_agent_are_one_line(tmp_path: Path) -> None:
    for args, words in ((["nope"], "unknown environment 'nope'"), (["tiny-shop", "--agent", "bogus"], "unknown agent 'bogus'")):
        done = subprocess.run([sys.executable, "-m", "stripebench_tui", "run", *args, "--headless",
                               "--episode-dir", str(tmp_path / "never")], capture_output=True, text=True, timeout=60)
        assert done.returncode == 2
        assert done.stderr.strip().count("\n") == 0 and words in done.stderr
    assert not (tmp_path / "never").exists()


def test_health_check_failure_exits_4_with_a_trace(tmp_path: Path) -> None:
    episode = tmp_path / "ep"
    done = subprocess.run([sys.executable, "-m", "stripebench_tui", "run", "broken-health", "--headless",
                           "--episode-dir", str(episode)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 4
    assert "stripebench: service sleeper failed its health check" in done.stderr
    lines = trace_lines(episode / "trace.jsonl")
    assert [line.get("status") for line in lines if line["type"] == "service"][-1] == "unhealthy"
    assert lines[-1]["type"] == "episode_end" and lines[-1]["reason"] == "error"
    assert "health check" in lines[-1]["error"]
    assert _gone(process_tag(episode / "trace.jsonl")) == []


def test_headless_approval_from_stdin(tmp_path: Path) -> None:
    proc, trace = _start(tmp_path, "--approve", "shell")
    try:
        for line in proc.stdout:
            if "waiting_for_approval" in line:
                break
        proc.stdin.write("reject not today\n")
        proc.stdin.flush()
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1, err  # the sign-up never ran, so the episode fails
    lines = trace_lines(trace)
    rejects = [line for line in lines if line["type"] == "operator" and line["action"] == "reject"]
    assert rejects and rejects[0]["text"] == "not today" and rejects[0]["call_id"] == "oracle-3"
    assert not any(line["type"] == "tool_result" and line["call_id"] == "oracle-3" for line in lines)
    assert lines[-1]["type"] == "episode_end" and lines[-1]["passed"] is False
