"""How long ``stripebench diff`` takes on two 10k-event traces (target: < 2 s wall).

Writes two checkout-like traces with the real TraceWriter (B = A with a turn inserted, one
command changed and one call failing), then measures, median of 3:

  * in-process: open both, reduce each (``state_at(None)``), ``diff_states``, render the text;
  * the CLI as a user runs it: ``python -m stripebench_tui diff A B`` (interpreter start included).

    python benchmarks/diff_traces.py [--events N] [--keep DIR]

The last line printed is the CLI wall time over the 2 s target.
"""

from __future__ import annotations

import argparse
import io
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_S = 2.0
RUNS = 3


def generate(path: Path, events: int, variant: bool, seed: int = 11) -> None:
    """Turns of message, call, result and an object or verdict; ``variant`` perturbs three turns."""
    from stripebench_tui.core.events import EpisodeEnd, GraderVerdict, Header, ModelMessage, StripeObject, ToolCall, ToolResult
    from stripebench_tui.core.trace import TraceWriter

    rng = random.Random(seed)
    header = Header(env="checkout-migration", agent="bench", title=f"{events} events{' (variant)' if variant else ''}",
                    extra={"variables": {"WORKSPACE": f"/tmp/bench-{'b' if variant else 'a'}/workspace"}})
    workspace = header.extra["variables"]["WORKSPACE"]
    turns = events // 4
    inserted, changed, failing = int(turns * 0.4), int(turns * 0.7), int(turns * 0.9)
    t, turn, written = 0.0, 0, 0
    with TraceWriter(path, header) as w:
        for step in range(1, turns + 1):
            plan = [("shell", {"command": f"cd {workspace} && python step_{step}.py"})]
            if variant and step == inserted:
                plan.insert(0, ("view_file", {"path": f"{workspace}/README.md"}))
            if variant and step == changed:
                plan = [("shell", {"command": f"cd {workspace} && python step_{step}.py --retry"})]
            for tool, args in plan:
                turn += 1
                t += rng.uniform(0.5, 2.0)
                w.write(ModelMessage(t=t, turn=turn, text=f"step {step}", tokens_in=900, tokens_out=80, latency=0.4))
                w.write(ToolCall(t=t + 0.1, turn=turn, call_id=f"c{turn}", tool=tool, arguments=args))
                failed = variant and step == failing
                w.write(ToolResult(t=t + 0.5, turn=turn, call_id=f"c{turn}", tool=tool, output="ok\n" * 40,
                                   exit_code=1 if failed else 0, is_error=failed, duration=0.4))
                if step % 40 == 0:
                    w.write(GraderVerdict(t=t + 0.6, turn=turn, criterion=f"criterion_{step % 5}",
                                          status="fail" if failed else rng.choice(["pass", "pending"])))
                else:
                    oid = f"cs_test_{rng.getrandbits(48):012x}9"
                    w.write(StripeObject(t=t + 0.6, turn=turn, object_id=oid, object_type="checkout.session",
                                         data={"id": oid, "status": "complete", "amount_total": 100 * (step % 9),
                                               "created": int(t)}))
                written += 4
                if turn % 100 == 0:
                    w.end_turn()
        w.write(EpisodeEnd(t=t + 1, turn=turn, reason="agent_done", score=1.0, passed=True))


def in_process(a: Path, b: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of loading both, diffing and rendering."""
    from stripebench_tui.commands.diff import load_state
    from stripebench_tui.core.episode_diff import diff_states
    from stripebench_tui.formats.diff_text import write_diff

    t0, c0 = time.perf_counter(), time.process_time()
    d = diff_states(load_state(a), load_state(b))
    write_diff(d, io.StringIO(), (str(a), str(b)))
    took = (time.perf_counter() - t0, time.process_time() - c0)
    assert not d.equivalent and d.first_divergence is not None
    return took


def cli(a: Path, b: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of the command, interpreter start included."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "stripebench_tui", "diff", str(a), str(b)], capture_output=True, text=True)
    took = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 1:
        raise SystemExit(f"diff exited {r.returncode}: {r.stderr[-500:]}")
    return took, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--keep", type=Path)
    args = parser.parse_args()
    tmp = None if args.keep else tempfile.TemporaryDirectory(prefix="diff_traces_")
    folder = args.keep or Path(tmp.name)  # type: ignore[union-attr]
    folder.mkdir(parents=True, exist_ok=True)
    try:
        a, b = folder / f"a-{args.events}.jsonl", folder / f"b-{args.events}.jsonl"
        for path, variant in ((a, False), (b, True)):
            if not path.exists():
                generate(path, args.events, variant)
        inner = [in_process(a, b) for _ in range(RUNS)]
        outer = [cli(a, b) for _ in range(RUNS)]
        med = lambda runs, i: statistics.median(r[i] for r in runs)  # noqa: E731
        print(f"{args.events:,} events each: in-process {med(inner, 0):.2f} s wall, {med(inner, 1):.2f} s CPU "
              f"(load, reduce, align, render); `stripebench diff` {med(outer, 0):.2f} s wall, {med(outer, 1):.2f} s CPU "
              f"(interpreter start included; median of {RUNS}; a loaded machine inflates wall, CPU less so)")
        print(f"target < {TARGET_S:g} s; ratio (CLI wall / target) {med(outer, 0) / TARGET_S:.2f}")
    finally:
        if tmp is not None:
            tmp.cleanup()


if __name__ == "__main__":
    main()
