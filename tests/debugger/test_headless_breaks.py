"""Headless `--break` when stdin ends: the breakpoints stay installed and recorded, hits are recorded, it runs on."""

from __future__ import annotations

import io
import sys
import threading
from pathlib import Path

import pytest

from stripebench_tui.commands.run import play_headless
from stripebench_tui.runtime.episode import Episode, EpisodeConfig
from tests.fixture_envs import fixture_envs  # noqa: F401  (registers the autouse fixture)
from tests.tui_live.helpers import trace_events

pytestmark = pytest.mark.slow

BREAKS = ["tool create_file", "tool shell"]  # tiny-shop's oracle: turn 2 creates handlers.py, turn 3 runs a shell call


def _config(tmp_path: Path) -> EpisodeConfig:
    return EpisodeConfig(env="tiny-shop", agent="oracle", episode_dir=tmp_path / "ep", breakpoints=list(BREAKS))


def _break_events(trace: Path) -> list[tuple]:
    return [(e["action"], e["details"].get("id"), e["details"].get("paused")) for e in trace_events(trace)
            if e["type"] == "operator" and (e["action"].startswith("break_") or e["action"] == "resume")]


def _statuses(trace: Path) -> list[str]:
    return [e["text"] for e in trace_events(trace) if e["type"] == "operator" and e["action"] == "status"]


async def test_stdin_at_its_end_from_the_start(tmp_path, monkeypatch, capsys):
    # `< /dev/null`: the end of input comes before the episode has a driver.
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert await play_headless(_config(tmp_path)) == 0  # ran to its end and passed
    trace = tmp_path / "ep" / "trace.jsonl"
    assert _break_events(trace) == [("break_add", 1, None), ("break_add", 2, None), ("break_hit", 1, False),
                                    ("break_hit", 2, False)]
    assert "paused" not in _statuses(trace)
    assert "end of input: breakpoint hits are recorded" in capsys.readouterr().err


class _StdinUntil:
    """A stdin with no lines that ends once ``ended`` is set (the operator closed it while paused at a hit)."""

    def __init__(self, ended: threading.Event) -> None:
        self.ended = ended

    def __iter__(self):
        self.ended.wait(60)
        return iter(())


async def test_stdin_ending_while_paused_at_a_hit(tmp_path, monkeypatch):
    paused = threading.Event()
    monkeypatch.setattr(sys, "stdin", _StdinUntil(paused))

    def on_event(ev) -> None:
        if ev.type == "operator" and ev.action == "status" and ev.text == "paused":
            paused.set()

    def make(config, subscribers):
        episode = Episode(config, subscribers=[*subscribers, on_event])
        episode.prepare()
        return episode

    assert await play_headless(_config(tmp_path), make_episode=make) == 0
    trace = tmp_path / "ep" / "trace.jsonl"
    # the first hit paused; the end of input resumed it; the second hit is recorded and does not pause
    assert _break_events(trace) == [("break_add", 1, None), ("break_add", 2, None), ("break_hit", 1, True),
                                    ("resume", None, None), ("break_hit", 2, False)]
    assert _statuses(trace).count("paused") == 1
