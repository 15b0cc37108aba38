"""Where a real oracle episode's time went (tiny-shop, emulator, live grading, headless): every stretch of the
harness's own work is recorded, so "other" is only what lies between them.

The structure is asserted exactly; the share of "other" only loosely (it is a few per cent here, and a loaded machine
slows the harness's steps and the unrecorded ones alike), so the bound cannot flake.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from stripebench_tui.core.events import EpisodeEnd, HarnessTime, Service
from stripebench_tui.core.operator import is_status
from stripebench_tui.core.profile import profile
from stripebench_tui.core.trace import open_trace
from stripebench_tui.runtime.episode import Episode, EpisodeConfig
from stripebench_tui.runtime.printer import LivePrinter

pytestmark = pytest.mark.slow


async def test_an_oracle_episode_records_each_stretch_of_the_harness_and_leaves_little_to_other(tmp_path: Path) -> None:
    printed = io.StringIO()
    episode = Episode(EpisodeConfig(env="tiny-shop", episode_dir=tmp_path / "ep", headless=True),
                      subscribers=[LivePrinter(printed)])
    result = await episode.run()
    assert result.passed is True, result
    events = list(open_trace(result.trace_path).iter_events())
    stretches = [e for e in events if isinstance(e, HarnessTime)]

    # setup: once, before turn 1, once the app is up; the services' time and the tool servers' are told apart
    setup = [s for s in stretches if s.stretch == "setup"]
    assert len(setup) == 1 and setup[0].turn == 0 and set(setup[0].parts) == {"setup", "tool_start"}
    healthy = next(e for e in events if isinstance(e, Service) and e.service == "app" and e.status == "healthy")
    first_turn = next(e for e in events if e.turn == 1)
    assert healthy.seq < setup[0].seq < first_turn.seq

    # every agent turn's end: the live grading's checks, and bringing the record up to date
    agent_turns = sorted({e.turn for e in events if e.turn > 0})
    turn_ends = [s for s in stretches if s.stretch == "turn_end"]
    assert [s.turn for s in turn_ends] == agent_turns
    assert all(set(s.parts) == {"grading", "publish"} for s in turn_ends)

    # the end: the final grading (and findings), just before the driver's last status and episode_end
    final = [s for s in stretches if s.stretch == "final"]
    assert len(final) == 1 and set(final[0].parts) == {"grading", "publish"}
    assert is_status(events[-2]) and isinstance(events[-1], EpisodeEnd) and events[-3] is final[0]

    time = profile(events)
    s = time.summary()
    assert time.parts() == ["setup", "tool_start", "grading", "publish"]
    assert time.turns[0].start == pytest.approx(0.0, abs=1e-3)  # the wall starts with the setup, at the trace's t=0
    assert s["model"] + s["tool"] + s["wait"] + sum(s[p] for p in time.parts()) + s["other"] == pytest.approx(s["wall"])
    assert s["other"] < 0.25 * s["wall"], s
    assert "harness_time" not in printed.getvalue() and "tool_start" not in printed.getvalue()  # data, not log lines
