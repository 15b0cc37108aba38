"""Pilot test: a benchmark-folder episode's external-grader verdicts turn from fail to pass in the verdicts pane."""

from __future__ import annotations

from pathlib import Path

import pytest

from stripebench_tui.core.operator import PAUSED
from stripebench_tui.envs.catalog import find_environment
from stripebench_tui.runtime.episode import EpisodeConfig
from stripebench_tui.tui.apps.live_app import create_live_app
from stripebench_tui.tui.widgets.verdicts import Verdicts
from tests.benchfolders.conftest import FOLDERS, tree_hash

from .helpers import SIZE, wait_for

pytestmark = pytest.mark.slow
CHALLENGES = ("donation", "subscription", "setup")


def _statuses(summary: str) -> dict[str, str]:
    """criterion → status as the pane shows it (its summary lines are ``name: status (turn N) …``)."""
    rows = (line.split(": ", 1) for line in summary.splitlines() if ": " in line)
    return {name: rest.split(" ", 1)[0] for name, rest in rows if name in CHALLENGES}


async def test_external_grader_verdicts_turn_from_fail_to_pass_as_the_oracle_submits(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("STRIPEBENCH_CACHE", str(tmp_path / "cache"))
    folder = FOLDERS / "config-gym"
    before = tree_hash(folder)
    cfg = EpisodeConfig(env=find_environment(str(folder)), agent="oracle", episode_dir=tmp_path / "ep",
                        headless=False, start_paused=True)
    app = create_live_app(cfg)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.live
        pane = screen.query_one(Verdicts)
        # Paused before turn 1: the grader has run on the untouched submission, and the pane says fail.
        await wait_for(pilot, lambda: _statuses(pane.summary) == dict.fromkeys(CHALLENGES, "fail"),
                       what="fail verdicts on the untouched submission")
        assert screen.episode.driver.status == PAUSED and screen.result is None
        await pilot.press("s")  # one turn: the oracle writes submission.json
        await wait_for(pilot, lambda: _statuses(pane.summary) == dict.fromkeys(CHALLENGES, "pass"),
                       what="pass verdicts after the submission")
        assert screen.result is None  # live verdicts, while the episode still runs (paused after the step)
        assert all(screen.live_state.verdicts[c].changed_turn >= 1 for c in CHALLENGES)  # turned by the submitting turn
        await pilot.press("space")
        await wait_for(pilot, lambda: screen.result is not None, what="the resumed episode to end")
        assert screen.result.score == 1.0
        await pilot.press("q")
    assert tree_hash(folder) == before
