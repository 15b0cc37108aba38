"""Resume drill: kill -9 a headless run once its first checkpoint is on disk, `stripebench resume` it, and compare
with an uninterrupted run: same score, every turn once, seq without gaps, one resume event."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stripebench_tui.core.events import AGENT, EpisodeEnd, EpisodeResume, ToolCall
from stripebench_tui.runtime.checkpoints import checkpoints_dir

from .test_drills import REAP_WITHIN, check_trace, start_runner, survivors

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300), pytest.mark.drill]


def calls_by_turn(events: list) -> list[tuple[int, str]]:
    return [(e.turn, e.tool) for e in events if isinstance(e, ToolCall) and e.actor == AGENT]


def test_kill_9_then_resume_ends_like_an_uninterrupted_run(tmp_path: Path) -> None:
    whole = tmp_path / "whole"
    assert start_runner(whole).wait(timeout=240) == 0
    expected = check_trace(whole / "trace.jsonl", "uninterrupted")
    killed = tmp_path / "killed"
    runner = start_runner(killed)
    first = checkpoints_dir(killed / "trace.jsonl") / "1" / "info.json"
    deadline = time.monotonic() + 120
    while not first.exists() and runner.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    runner.kill()
    runner.wait()
    assert first.exists(), "the run never took its first checkpoint"
    check_trace(killed / "trace.jsonl", "killed")  # readable as it was left
    with (killed / "trace.jsonl").open() as fh:
        tag = json.loads(fh.readline())["extra"]["process_tag"]
    assert survivors(tag, REAP_WITHIN) == []  # the services of the dead run are gone: their ports are free
    resumed = subprocess.run([sys.executable, "-m", "stripebench_tui", "resume", str(killed), "--headless"],
                             stdin=subprocess.DEVNULL, capture_output=True, timeout=240)
    assert resumed.returncode == 0, resumed.stderr.decode()[-2000:]
    events = check_trace(killed / "trace.jsonl", "resumed")  # seq 0..n without gaps or repeats
    [resume] = [e for e in events if isinstance(e, EpisodeResume)]
    assert resume.from_turn >= 1
    assert calls_by_turn(events) == calls_by_turn(expected)  # each turn once, in order
    [end] = [e for e in events if isinstance(e, EpisodeEnd)]
    [whole_end] = [e for e in expected if isinstance(e, EpisodeEnd)]
    assert (end.score, end.passed) == (whole_end.score, whole_end.passed) == (1.0, True)
    turns = [e.turn for e in events]
    assert turns == sorted(turns)
    # the readers take the resumed trace like any other
    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "stripebench_tui", *args], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=120)

    shown = cli("replay", str(killed), "--headless")
    assert shown.returncode == 0 and f"⟲ resumed from the checkpoint of turn {resume.from_turn}" in shown.stdout
    assert cli("replay", str(killed), "--summary").returncode == 0
    assert cli("report", str(killed), "-o", str(tmp_path / "report.html")).returncode == 0
    assert cli("export", str(killed), "-o", str(tmp_path / "atif.json")).returncode == 0
    compared = cli("diff", str(whole), str(killed))
    assert compared.returncode in (0, 1) and "Traceback" not in compared.stderr, compared.stderr

