"""Fork cost: restoring a checkpoint at the last turn vs at turn 1, and restoring vs re-executing.

    python benchmarks/fork_restore.py [--turns 40] [--env idempotent-payments] [--runs 5]

Plays one long synthetic episode on a real environment (its seed, its app, live grading): a scripted agent that,
turn after turn, writes a file in the workspace, edits another, and every fifth turn pays an order through the app
(Stripe objects, the app's SQLite database) — with a checkpoint at every turn. Then forks it with the no-op agent,
timing each fork from ``fork_episode`` to the moment the continuing agent is started (setup, restore and services
included; the fork is stopped there):

- restore at turn 1 and at the last turn (``--runs`` each, interleaved, the median: on a shared machine one fork
  varies by a factor of two with the load);
- re-execution (``--reexecute``) at the last turn, once: every recorded tool call made again.

Prints each time, the part of it that depends on the turn (the restore itself), the restore/re-execution ratio,
and on the last line the last-turn/turn-1 ratio of restores, best of the runs and median (target ≤ 1.2: a fork's
cost does not grow with the turn).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stripebench_tui.core.agent import AgentTurn, Observation, Task, ToolRequest  # noqa: E402
from stripebench_tui.runtime.checkpoints import du, list_checkpoints, checkpoints_dir, human_bytes  # noqa: E402
from stripebench_tui.runtime.episode import Episode, EpisodeConfig  # noqa: E402
from stripebench_tui.runtime.fork import fork_config, fork_episode  # noqa: E402

TARGET = 1.2


class LongAgent:
    """Scripted long episode: one tool call per turn, ``turns`` turns, then done."""

    name = "long-script"
    model = "script"

    def __init__(self, turns: int) -> None:
        self.turns = turns
        self.n = 0
        self.url = ""

    async def start(self, task: Task) -> None:
        self.url = task.context.get("APP_URL", "")

    async def next_turn(self, observations: list[Observation]) -> AgentTurn:
        self.n += 1
        n = self.n
        if n > self.turns:
            return AgentTurn(text="done", done=True, model=self.model)
        if n % 5 == 0:
            command = (f"ID=$(curl -s -X POST {self.url}/orders -H 'content-type: application/json' "
                       f"-d '{{\"email\":\"b{n}@example.com\",\"amount\":{1000 + n}}}' | python3 -c "
                       "'import json,sys; print(json.load(sys.stdin)[\"id\"])'); "
                       f"curl -s -X POST {self.url}/orders/$ID/pay -H 'content-type: application/json' "
                       "-d '{\"payment_method\":\"pm_card_visa\"}'; echo")
            call = ToolRequest(call_id=f"long-{n}", tool="shell", arguments={"command": command, "timeout_s": 60})
        elif n % 2 == 0:
            call = ToolRequest(call_id=f"long-{n}", tool="shell",
                               arguments={"command": f"echo 'turn {n}' >> notes/log.txt; ls notes | wc -l"})
        else:
            body = "".join(f"line {i} of note {n}\n" for i in range(400))  # ~7 kB each
            call = ToolRequest(call_id=f"long-{n}", tool="create_file", arguments={"path": f"notes/n{n}.txt",
                                                                                    "content": body})
        return AgentTurn(text=f"step {n}", tool_calls=[call], model=self.model)

    async def close(self) -> None:
        pass


async def play_long(env: str, turns: int, root: Path) -> Path:
    episode = Episode(EpisodeConfig(env=env, agent="noop", episode_dir=root / "long", max_turns=turns + 5))
    episode.prepare()
    episode.agent = LongAgent(turns)
    result = await episode.run()
    if result.setup_failed or result.trace_path is None:
        raise SystemExit(f"the long episode failed to start: {result.error}")
    return result.trace_path


async def time_fork(trace: Path, turn: int, root: Path, name: str, reexecute: bool = False) -> float:
    """Seconds from fork_episode to the continuing agent's start; the fork is stopped there."""
    started = time.perf_counter()
    config = fork_config(trace, "noop", episode_dir=root / name)
    episode = fork_episode(trace, turn, config, reexecute=reexecute)
    fork: Any = episode.fork
    inner = fork.inner
    reached: list[float] = []

    async def start(task: Task) -> None:
        reached.append(time.perf_counter() - started)
        episode.stop("benchmark: the fork is ready")

    inner.start = start
    await episode.run()
    if not reached:
        raise SystemExit(f"{name}: the fork ended before its agent started ({episode.result})")
    return reached[0]


def restore_work(trace: Path, turn: int, where: Path) -> float:
    """Seconds of what a restore does that depends on the turn: the emulator's state file, the workspace, and
    reading turns 1..N of the trace (for the new trace and the agent)."""
    from stripebench_tui.core.trace import open_trace
    from stripebench_tui.runtime.checkpoints import checkpoint_at, restore_emulator, restore_workspace
    from stripebench_tui.runtime.restore import prefix_events

    info = checkpoint_at(trace, turn)
    assert info is not None
    started = time.perf_counter()
    restore_emulator(info, where / "emulator.sqlite")
    restore_workspace(info, where / "workspace")
    prefix_events(open_trace(trace), turn)
    return time.perf_counter() - started


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--env", default="idempotent-payments")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="stripebench-fork-bench-") as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        trace = await play_long(args.env, args.turns, root)
        infos = list_checkpoints(trace)
        last = infos[-1].turn
        print(f"long episode: {args.env}, {last} turns with a checkpoint each, played in "
              f"{time.perf_counter() - started:.1f} s; checkpoints use {human_bytes(du(checkpoints_dir(trace)))} "
              f"(median {human_bytes(statistics.median(i.disk_bytes for i in infos))} each, "
              f"taken in a median {statistics.median(i.seconds for i in infos) * 1000:.0f} ms)")
        first_times, last_times = [], []
        for i in range(args.runs):  # interleaved: the machine's load drifts over both alike
            first_times.append(await time_fork(trace, 1, root, f"t1-{i}"))
            last_times.append(await time_fork(trace, last, root, f"tN-{i}"))
        reexec = await time_fork(trace, last, root, "reexec", reexecute=True)
        t1, tn = statistics.median(first_times), statistics.median(last_times)
        b1, bn = min(first_times), min(last_times)
        w1, wn = restore_work(trace, 1, root / "w1"), restore_work(trace, last, root / "wN")
        print(f"restore fork at turn 1: median {t1:.2f} s, best {b1:.2f} s (runs "
              f"{', '.join(f'{t:.2f}' for t in first_times)})")
        print(f"restore fork at turn {last}: median {tn:.2f} s, best {bn:.2f} s (runs "
              f"{', '.join(f'{t:.2f}' for t in last_times)})")
        print(f"of which the restore itself (emulator state, workspace, turns 1..N read): turn 1 {w1 * 1000:.0f} ms, "
              f"turn {last} {wn * 1000:.0f} ms; the rest is starting the app and the tool servers")
        print(f"re-execution fork at turn {last}: {reexec:.2f} s; restore/re-execution {tn / reexec:.2f} (median)")
        print(f"fork at turn {last} / fork at turn 1: {bn / b1:.2f} best of {args.runs}, {tn / t1:.2f} median "
              f"(target <= {TARGET})")


if __name__ == "__main__":
    asyncio.run(main())
