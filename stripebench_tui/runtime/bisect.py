"""Bisect: the last turn of a recorded episode from which a fork continued by an agent still passes.

``bisect_turns(turns, probe)`` searches the checkpointed turns (oldest first) with ``probe(turn) -> Probe``,
assuming that once a fork from some turn fails, forks from later turns fail too (the run's mistake is made by
then): it probes the first turn (nothing to rescue from if it fails), the last (nothing went wrong yet if it
passes), then halves the interval between the last known pass and the first known fail. ``probe_fork`` is the real
probe: ``runs`` forks restored from the turn's checkpoint (``runtime.restore``), continued by the agent (told
``hint`` first, when given); a turn passes when at least half its forks pass.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stripebench_tui.errors import EXIT_RUNTIME, with_exit_code
from stripebench_tui.runtime.checkpoints import list_checkpoints


@dataclass
class Probe:
    """What the forks from one turn did."""

    turn: int
    scores: list[float | None] = field(default_factory=list)
    passed_runs: int = 0
    forks: list[Path] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """At least half the forks passed."""
        return bool(self.scores) and 2 * self.passed_runs >= len(self.scores)


@dataclass
class BisectResult:
    """The last turn from which the agent still passes (None: not even the first), and every probe made."""

    last_passing: int | None
    probes: list[Probe]


async def bisect_turns(turns: list[int], probe: Callable[[int], Awaitable[Probe]]) -> BisectResult:
    """The search of the module docstring over ``turns`` (ascending)."""
    done: dict[int, Probe] = {}

    async def at(index: int) -> bool:
        turn = turns[index]
        if turn not in done:
            done[turn] = await probe(turn)
        return done[turn].passed

    ordered = lambda: [done[t] for t in sorted(done)]
    if not turns:
        return BisectResult(None, [])
    if not await at(0):
        return BisectResult(None, ordered())
    if await at(len(turns) - 1):
        return BisectResult(turns[-1], ordered())
    good, bad = 0, len(turns) - 1  # turns[good] passes, turns[bad] fails
    while bad - good > 1:
        middle = (good + bad) // 2
        if await at(middle):
            good = middle
        else:
            bad = middle
    return BisectResult(turns[good], ordered())


def checkpointed_turns(trace_path: Path, what: str = "nothing to bisect") -> list[int]:
    """The turns with a checkpoint; exit code 4 (one line, ending with ``what``) when there are none."""
    turns = [c.turn for c in list_checkpoints(trace_path)]
    if not turns:
        raise with_exit_code(EXIT_RUNTIME, f"{trace_path}: the episode kept no checkpoint (run it with --checkpoint "
                                           f"every, on the emulator in the local sandbox): {what}")
    return turns


def probe_fork(trace_path: Path, agent: str, *, options: dict[str, Any] | None = None, runs: int = 1,
               hint: str = "", root: Path, on_fork: Callable[[int, int, Any], None] | None = None
               ) -> Callable[[int], Awaitable[Probe]]:
    """The probe of ``bisect_turns``: ``runs`` forks per turn under ``root/turn-T-run-K``, each reported to
    ``on_fork(turn, run, result)``."""
    # fork and restore bring the episode runtime (about 1.5 s); `stripebench checkpoints` loads this module
    # for checkpointed_turns alone
    from stripebench_tui.runtime.fork import fork_config, fork_episode
    from stripebench_tui.runtime.restore import RestoredEpisode

    async def probe(turn: int) -> Probe:
        found = Probe(turn=turn)
        for run in range(1, runs + 1):
            where = root / f"turn-{turn}-run-{run}"
            config = fork_config(trace_path, agent, agent_options=dict(options or {}), episode_dir=where)
            episode = fork_episode(trace_path, turn, config)
            if hint and isinstance(episode, RestoredEpisode) and episode.fork is not None:
                episode.fork.hint = hint  # (a re-executing fork, for an external harness, has no way to be told)
            result = await episode.run()
            found.scores.append(result.score)
            found.passed_runs += 1 if result.passed else 0
            found.forks.append(where)
            if on_fork is not None:
                on_fork(turn, run, result)
        return found

    return probe


__all__ = ["BisectResult", "Probe", "bisect_turns", "checkpointed_turns", "probe_fork"]
