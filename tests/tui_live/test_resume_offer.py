"""The TUI's resume: a checkpointed episode whose process died (its trace cut where a checkpoint was taken) is
offered a resume on open; r and Enter go on from that checkpoint on a live screen, to the same end as the run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from stripebench_tui.core.events import EpisodeEnd, EpisodeResume
from stripebench_tui.core.trace import open_trace
from stripebench_tui.formats.lineage import read_lineage
from stripebench_tui.runtime.checkpoints import list_checkpoints
from stripebench_tui.runtime.episode import run_episode
from stripebench_tui.tui.apps.replay_app import create_app
from stripebench_tui.tui.screens.live_screen import LiveEpisodeScreen
from stripebench_tui.tui.screens.resume import ResumeScreen
from stripebench_tui.tui.sources.episode_source import TraceSource

from .helpers import SIZE, config, wait_for

pytestmark = pytest.mark.slow


async def test_r_resumes_a_dead_episode_from_its_checkpoint_on_a_live_screen(tmp_path: Path) -> None:
    whole = await run_episode(config(tmp_path, "ep", checkpoint="every"))
    assert whole.passed
    trace = whole.trace_path
    first = list_checkpoints(trace)[0]
    for later in list_checkpoints(trace)[1:]:
        shutil.rmtree(later.path)
    with open(trace, "r+b") as fh:  # died right after its first checkpoint: no episode_end
        fh.truncate(first.trace_bytes)
    app = create_app(TraceSource(open_trace(trace)), clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        episode = app.screen
        await wait_for(pilot, lambda: episode.lineage.family is not None, what="the episode's family")
        assert not episode.lineage.family.ended
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, ResumeScreen), what="the resume dialog")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, LiveEpisodeScreen), what="the resumed episode")
        live = app.screen
        await wait_for(pilot, lambda: live.result is not None, timeout=120, what="the resumed episode to end")
        assert live.result.passed, live.error
    events = list(open_trace(trace).iter_events())
    assert [e.from_turn for e in events if isinstance(e, EpisodeResume)] == [first.turn]
    assert [e.passed for e in events if isinstance(e, EpisodeEnd)] == [True]
    assert read_lineage(trace).root.resumed_at == [first.turn] and read_lineage(trace).forks == 0
