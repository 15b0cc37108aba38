"""A headless `stripebench run --sandbox docker` killed with SIGKILL: its container does not outlive it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stripebench_tui.runtime.docker_engine import LABEL_EPISODE
from stripebench_tui.runtime.reaper import tagged_pids
from tests.docker.helpers import start_and_stop_sandbox

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _start(tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    episode = tmp_path / "ep"
    proc = subprocess.Popen(
        [sys.executable, "-m", "stripebench_tui", "run", "tiny-shop", "--headless", "--agent", "human",
         "--sandbox", "docker", "--episode-dir", str(episode)],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    return proc, episode / "trace.jsonl"


def _header_and_ready(trace: Path, proc: subprocess.Popen, timeout: float = 90.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"stripebench run ended early: {proc.stderr.read()}")
        if trace.exists():
            lines = [json.loads(x) for x in trace.read_text().splitlines() if x.endswith("}")]
            if any(e.get("type") == "service" and e.get("service") == "app" and e.get("status") == "healthy"
                   for e in lines[1:]):
                return lines[0]
        time.sleep(0.1)
    raise AssertionError("the app never became healthy")


def _containers(client, tag: str) -> list:
    return client.containers.list(all=True, filters={"label": f"{LABEL_EPISODE}={tag}"}, ignore_removed=True)


def _wait(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return condition()


def _reaper_pid(container: str) -> int:
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmd = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"--reap" in cmd and container.encode() in cmd:
                return int(entry)
    raise AssertionError(f"no container watchdog for {container}")


def test_sigkilled_runner_leaves_no_container(docker_client, tmp_path: Path) -> None:
    proc, trace = _start(tmp_path)
    try:
        header = _header_and_ready(trace, proc)
        tag = header["extra"]["process_tag"]
        assert len(_containers(docker_client, tag)) == 1
        proc.kill()
        proc.wait(10)
        assert _wait(lambda: not _containers(docker_client, tag), 30), "container outlived its killed runner"
        assert _wait(lambda: not tagged_pids(tag), 10), tagged_pids(tag)
    finally:
        if proc.poll() is None:
            proc.kill()


def test_ctrl_c_stops_the_episode_and_removes_its_container(docker_client, tmp_path: Path) -> None:
    proc, trace = _start(tmp_path)
    try:
        tag = _header_and_ready(trace, proc)["extra"]["process_tag"]
        proc.send_signal(signal.SIGINT)
        proc.wait(60)
        assert _containers(docker_client, tag) == []  # removed before stripebench exits
        assert tagged_pids(tag) == []
        assert json.loads(trace.read_text().splitlines()[-1])["type"] == "episode_end"
    finally:
        if proc.poll() is None:
            proc.kill()


def test_container_of_a_run_killed_with_its_watchdog_is_removed_on_next_start(docker_client, tmp_path: Path) -> None:
    proc, trace = _start(tmp_path)
    try:
        header = _header_and_ready(trace, proc)
        tag, name = header["extra"]["process_tag"], header["extra"]["container"]
        os.kill(_reaper_pid(name), signal.SIGKILL)  # as if the whole machine's processes were killed
        proc.kill()
        proc.wait(10)
        assert len(_containers(docker_client, tag)) == 1  # stale now: nobody left to remove it
    finally:
        if proc.poll() is None:
            proc.kill()

    start_and_stop_sandbox(tmp_path / "next")
    assert _containers(docker_client, tag) == []
    assert _wait(lambda: not tagged_pids(tag), 10), tagged_pids(tag)
