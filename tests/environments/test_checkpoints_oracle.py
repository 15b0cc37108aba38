"""Checkpoints on our own environments' oracle episodes: each turn's checkpoint restores the emulator's state (object
by object) and the workspace (file by file, the app's SQLite databases row by row) as they were at that turn's end,
and a fork restored from the middle of the episode (before its first browser call: a checkpoint holds no browser
page) continues with the oracle and passes.

The default suite plays one environment whose app keeps a SQLite database; the sweep over every environment is a
drill."""

from __future__ import annotations

from pathlib import Path

import pytest

from stripebench_tui.envs.catalog import find_environment, list_environments
from stripebench_tui.runtime.episode import EpisodeConfig
from stripebench_tui.runtime.fork import fork_config, fork_episode
from stripebench_tui.runtime.restore import RestoredEpisode
from tests.checkpoint_checks import compare_restores, play_witnessed

FAST = "idempotent-payments"


async def _check(env_id: str, tmp_path: Path) -> None:
    env = find_environment(env_id)
    episode = await play_witnessed(EpisodeConfig(env=env, agent="oracle", episode_dir=tmp_path / "ep"))
    result = episode.result
    assert result is not None and result.passed, (env_id, result)
    turns = compare_restores(episode, tmp_path / "scratch")
    assert turns and turns == list(range(1, len(turns) + 1)), turns
    # The browser's page and cookies are not part of a checkpoint (the restored episode reopens the last page the
    # agent navigated to, as first loaded), and the oracle does not look at what its calls return: its fork goes on
    # from no later than its first browser call.
    from stripebench_tui.core.events import ToolCall
    from stripebench_tui.core.trace import open_trace

    browsing = [e.turn for e in open_trace(result.trace_path).iter_events()
                if isinstance(e, ToolCall) and e.tool.startswith("browser_")]
    middle = min(turns[(len(turns) - 1) // 2], browsing[0] if browsing else turns[-1])
    middle = max(middle, 1)
    fork = fork_episode(result.trace_path, middle, fork_config(result.trace_path, "oracle",
                                                              episode_dir=tmp_path / "fork"))
    assert isinstance(fork, RestoredEpisode)
    forked = await fork.run()
    assert forked.passed, (env_id, middle, forked)


@pytest.mark.slow
async def test_idempotent_payments_checkpoints_restore_and_fork(tmp_path: Path) -> None:
    await _check(FAST, tmp_path)


@pytest.mark.drill
@pytest.mark.parametrize("env_id", [e.id for e in list_environments() if e.id != FAST])
async def test_every_environment_checkpoints_restore_and_fork(env_id: str, tmp_path: Path) -> None:
    await _check(env_id, tmp_path)
