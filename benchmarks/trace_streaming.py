"""How `stripebench replay TRACE --summary` scales with the trace: events per second, peak RSS, linearity.

Writes synthetic traces of 100k and 1M events (``stripebench_tui.testing.big_trace``: model messages, tool calls
and results, Stripe requests and objects, verdicts, a few recorded findings; about 370 bytes an event, 37 MB and
375 MB), then runs the command as a user does, ``python -m stripebench_tui replay T --summary``, in a fresh process
each time, the sizes alternating so that a change in machine speed spreads over both. Each run's CPU time and peak
RSS come from ``os.wait4`` (that child's own figures); CPU time, which a loaded machine disturbs far less than wall
time, is what the rates and the ratio use, less the same command's cost on a 100-event trace (interpreter start,
imports), so that they describe the work per event.

Targets: the 1M-event trace summarised in under 300 MB peak RSS (before streaming: 1.25 GB), in time linear in size.
The last line printed is the per-event CPU time of the largest trace over that of the smallest (1.0: linear).

    python benchmarks/trace_streaming.py                        # 100k and 1M events, 2 runs each
    python benchmarks/trace_streaming.py --keep DIR             # keep (and reuse) the generated traces in DIR
    python benchmarks/trace_streaming.py --events 20000,200000 --runs 3
    python benchmarks/trace_streaming.py --reader export        # the same for export --format atif, diff or --headless
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TINY = 100  # events of the trace whose run is the fixed cost (start-up) taken off the others
TARGET_MB = 300
READERS = {  # what each reader's command line is, for a trace path
    "summary": lambda t: ["replay", t, "--summary"],
    "headless": lambda t: ["replay", t, "--headless"],
    "export": lambda t: ["export", t, "--format", "atif", "-o", os.devnull, "--force"],
    "diff": lambda t: ["diff", t, t],
}


def run(reader: str, trace: Path) -> tuple[float, float, float]:
    """(wall s, CPU s, peak RSS MB) of one run of the command in a fresh process."""
    argv = [sys.executable, "-m", "stripebench_tui", *READERS[reader](str(trace))]
    t0 = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)  # this child's own CPU time and peak RSS
    wall = time.perf_counter() - t0
    child.returncode = os.waitstatus_to_exitcode(status)
    err = child.stderr.read().decode() if child.stderr else ""
    if child.returncode not in (0, 1):  # 1: the episode failed, as the synthetic one does
        raise SystemExit(f"{' '.join(argv)} exited {child.returncode}: {err[-1000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024  # Linux: KiB


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", default="100000,1000000", help="comma-separated trace sizes (default 100k,1M)")
    parser.add_argument("--runs", type=int, default=2, help="runs per size (median reported)")
    parser.add_argument("--reader", choices=sorted(READERS), default="summary")
    parser.add_argument("--keep", type=Path, help="directory to keep (and reuse) the generated traces in")
    args = parser.parse_args()
    sizes = sorted(int(n) for n in args.events.split(","))
    from stripebench_tui.testing import big_trace

    tmp = None if args.keep else tempfile.TemporaryDirectory(prefix="trace_streaming_")
    folder = args.keep or Path(tmp.name)  # type: ignore[union-attr]
    folder.mkdir(parents=True, exist_ok=True)
    try:
        paths = {}
        for n in (TINY, *sizes):
            paths[n] = folder / f"synthetic-{n}.jsonl"
            if not paths[n].exists():
                print(f"writing a {n:,}-event trace…", file=sys.stderr, flush=True)
                big_trace.write(paths[n], n)
        runs: dict[int, list[tuple[float, float, float]]] = {n: [] for n in (TINY, *sizes)}
        for i in range(args.runs):
            order = (TINY, *sizes) if i % 2 == 0 else (TINY, *reversed(sizes))
            for n in order:
                runs[n].append(run(args.reader, paths[n]))
        fixed = statistics.median(r[1] for r in runs[TINY])
        print(f"{args.reader}: fixed cost (a {TINY}-event trace) {fixed:.2f} s CPU, "
              f"peak RSS {max(r[2] for r in runs[TINY]):.0f} MB")
        per_event = {}
        for n in sizes:
            wall = statistics.median(r[0] for r in runs[n])
            cpu = statistics.median(r[1] for r in runs[n])
            rss = max(r[2] for r in runs[n])
            per_event[n] = max(cpu - fixed, 1e-9) / n
            size_mb = paths[n].stat().st_size / 1e6
            print(f"{n:>9,} events ({size_mb:5.0f} MB): {wall:6.1f} s wall, {cpu:6.1f} s CPU, "
                  f"{1 / per_event[n]:8,.0f} events/s (CPU, start-up taken off), peak RSS {rss:5.0f} MB"
                  + (f" (target < {TARGET_MB} MB)" if n >= 1_000_000 else ""), flush=True)
        small, large = sizes[0], sizes[-1]
        print(f"per-event CPU time {large:,} vs {small:,} events (1.0 = linear): "
              f"{per_event[large] / per_event[small]:.2f}")
    finally:
        if tmp is not None:
            tmp.cleanup()


if __name__ == "__main__":
    main()
