"""Oracle episode wall time: a whole live episode (emulator, seed, services, tools, grading) played by the oracle.

    python benchmarks/oracle_episode.py [ENV] [--runs 1]

Prints each run's wall time, setup time (until the agent's first turn), turns and
score, then the median's ratio to the 60 s target (issue 4: checkout-migration).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from stripebench_tui.core.events import Event
from stripebench_tui.runtime.episode import EpisodeConfig, run_episode

TARGET = 60.0


async def one(env: str, root: Path) -> tuple[float, float, int, float | None]:
    """(wall seconds, setup seconds, agent turns, score) of one oracle episode."""
    first_turn: list[float] = []
    turns: set[int] = set()
    started = time.monotonic()

    def watch(event: Event) -> None:
        if event.turn > 0:
            turns.add(event.turn)
            if not first_turn:
                first_turn.append(time.monotonic() - started)

    result = await run_episode(EpisodeConfig(env=env, agent="oracle", episodes_root=root), subscribers=[watch])
    wall = time.monotonic() - started
    if result.setup_failed or result.reason != "agent_done":
        raise SystemExit(f"{env}: the episode ended with {result.reason}: {result.error}")
    return wall, (first_turn or [wall])[0], len(turns), result.score


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("env", nargs="?", default="checkout-migration")
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    walls = []
    with tempfile.TemporaryDirectory(prefix="stripebench-bench-") as tmp:
        for n in range(1, args.runs + 1):
            wall, setup, turns, score = asyncio.run(one(args.env, Path(tmp)))
            walls.append(wall)
            print(f"run {n}: {wall:.1f} s wall ({setup:.1f} s setup), {turns} turns, score {score}")
    median = statistics.median(walls)
    print(f"{args.env}: median {median:.1f} s; ratio to the {TARGET:.0f} s target: {median / TARGET:.2f}x")


if __name__ == "__main__":
    main()
