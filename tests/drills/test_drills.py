"""Drills on the headless runner: kill -9 at random moments, and eight episodes at once on a small machine.

Both use the tiny-shop fixture environment (a few seconds per episode). The kill drill's moments come from a
seeded RNG; the seed is printed (and named in every failure) and ``STRIPEBENCH_DRILL_SEED`` replays it.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stripebench_tui.formats.open import open_episode
from stripebench_tui.runtime.reaper import tagged_pids

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300), pytest.mark.drill]

ENV = "tiny-shop"
KILLS = 5
AT_ONCE = 8
FULL_TRACE_LINES = 30  # a tiny-shop oracle trace has about 35 lines: a kill lands anywhere from the header on
REAP_WITHIN = 30.0  # seconds for the watchdog to stop what a killed runner left (it takes well under one)
EPISODE_WITHIN = 240.0  # seconds for one episode, also with seven others on two cores


def start_runner(episode: Path) -> subprocess.Popen:
    """A headless oracle episode of the fixture environment in ``episode`` (stderr kept beside it)."""
    return subprocess.Popen([sys.executable, "-m", "stripebench_tui", "run", ENV, "--headless", "--episode-dir",
                             str(episode)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=open(f"{episode}.stderr", "wb"))


def flushed_lines(trace: Path) -> list[dict]:
    """The trace's lines that are complete on disk right now (a line being written is not one yet)."""
    if not trace.exists():
        return []
    data = trace.read_bytes()
    return [json.loads(line) for line in data[:data.rfind(b"\n") + 1].splitlines()]


def watchdog_pids(tag: str) -> list[int]:
    """Live watchdogs (``python -m stripebench_tui.runtime.reaper TAG``) of the episode tagged ``tag``."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if b"stripebench_tui.runtime.reaper" in argv and tag.encode() in argv and state != "Z":
            found.append(int(entry))
    return found


def survivors(tag: str, within: float) -> list[int]:
    """Processes of the episode still alive once the watchdog had ``within`` seconds to stop them."""
    deadline = time.monotonic() + within
    while (left := tagged_pids(tag) + watchdog_pids(tag)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def check_trace(trace: Path, why: str) -> list:
    """Open ``trace`` with the trace reader and check its ``seq`` has no gaps; its events."""
    opened = open_episode(trace)
    events = list(opened.iter_events())
    assert [e.seq for e in events] == list(range(len(events))), f"{why}: seq has gaps"
    opened.state_at()  # and the reducer takes every event
    return events


def test_kill_9_at_random_moments_loses_nothing_acknowledged_and_leaves_no_process(tmp_path: Path) -> None:
    seed = int(os.environ.get("STRIPEBENCH_DRILL_SEED") or random.SystemRandom().randrange(2**32))
    print(f"kill drill seed {seed} (STRIPEBENCH_DRILL_SEED={seed} replays it)")
    rng = random.Random(seed)
    for n in range(KILLS):
        at_line, jitter = rng.randint(1, FULL_TRACE_LINES), rng.uniform(0, 0.05)
        why = f"seed {seed}, kill {n + 1}: after trace line {at_line} + {jitter:.3f}s"
        episode = tmp_path / f"ep{n}"
        trace = episode / "trace.jsonl"
        runner = start_runner(episode)
        try:
            deadline = time.monotonic() + EPISODE_WITHIN
            while len(flushed_lines(trace)) < at_line and runner.poll() is None:
                assert time.monotonic() < deadline, f"{why}: the trace never reached line {at_line}"
                time.sleep(0.01)
            time.sleep(jitter)  # the random moment itself, not a wait for anything
            acknowledged = flushed_lines(trace)
            runner.kill()
        finally:
            runner.kill()
            runner.wait(30)
        print(f"{why}: killed with {len(acknowledged)} lines on disk")
        assert acknowledged, f"{why}: no trace header"
        tag = acknowledged[0]["extra"]["process_tag"]
        assert survivors(tag, REAP_WITHIN) == [], f"{why}: processes of the episode outlived it"
        events = check_trace(trace, why)
        seqs = [line["seq"] for line in acknowledged[1:]]
        assert [e.seq for e in events[:len(seqs)]] == seqs, f"{why}: lines on disk before the kill are missing"
        assert [e.to_dict() for e in events[:len(seqs)]] == acknowledged[1:], f"{why}: lines changed after the kill"


def test_eight_episodes_at_once_all_end_with_complete_traces(tmp_path: Path) -> None:
    episodes = [tmp_path / f"ep{n}" for n in range(AT_ONCE)]
    runners = [start_runner(ep) for ep in episodes]
    try:
        codes = [r.wait(EPISODE_WITHIN) for r in runners]
    finally:
        for r in runners:
            r.kill()
            r.wait(30)
    for episode, code in zip(episodes, codes, strict=True):
        events = check_trace(episode / "trace.jsonl", episode.name)
        end = events[-1]
        assert end.type == "episode_end", f"{episode.name} has no episode_end"
        assert (code, end.reason, end.passed) == (0, "agent_done", True), Path(f"{episode}.stderr").read_text()[-2000:]
        header = open_episode(episode / "trace.jsonl").header
        assert survivors(header.extra["process_tag"], REAP_WITHIN) == [], f"{episode.name} left processes"
