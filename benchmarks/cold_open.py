"""Opening a trace that came without its turn index (copied without its ``.d`` folder, imported, another tool's).

Writes a synthetic trace of 1M events (``stripebench_tui.testing.big_trace``, about 375 MB, no ``.d`` folder), then
measures, each in a fresh process (so that memory figures are clean) with ``$STRIPEBENCH_CACHE`` in a temporary
folder:

  * cold first paint: ``open_episode`` → the replay screen shows the timeline and the first turn (headless Textual,
    ``App.run_test``), with the trace's ``.d`` folder and the cache removed before each run, and that process's
    peak RSS at that moment. The first turns are painted as soon as the turn scan has found them
    (``EpisodeScreen.load_turns``, ``core/cold_index.py``);
  * the scan alone, as the screen runs it after the first paint: ``Trace.scan_turns`` to its end, which writes
    ``trace.jsonl.d/turns.idx``: its wall time and the process's peak RSS (bounded: it keeps two integers a turn);
  * indexed first paint: the same first paint once that index is there (the next open).

Before this, a cold open built the whole state index before its first paint: 45–53 s and 1.3 GB at 1M events, and
kept nothing, so every open paid again; with the index, 2.1 s and 200 MB. Targets at 1M events: cold first paint
≤ 2 s, its RSS ≤ 400 MB. The last line printed is the ratio of the cold first paint to the indexed one.

    nice python benchmarks/cold_open.py                 # 1M events in a temp dir, 3 runs of each paint
    python benchmarks/cold_open.py --events 100000 --runs 5
    python benchmarks/cold_open.py --keep DIR           # keep (and reuse) the generated trace in DIR
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from trace_open import SIZE, _until, _when_painted  # noqa: E402  (the first-paint probe, shared)

TARGET_PAINT_S = 2.0
TARGET_RSS_MB = 400


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


async def _first_paint(path: str) -> dict:
    from stripebench_tui.formats.open import open_episode
    from stripebench_tui.tui.apps.replay_app import create_app
    from stripebench_tui.tui.sources.episode_source import TraceSource

    start = time.perf_counter()
    app = create_app(TraceSource(open_episode(path)))
    seen = _when_painted(app, lambda: getattr(app.screen, "turn", None) is not None)
    async with app.run_test(size=SIZE):
        await _until(seen, timeout=600)
        rss = _rss_mb()
        turns = len(app.screen.turns or ())
        app.exit()
    return {"first_paint_s": seen["t"] - start, "rss_mb": rss, "turns_shown": turns}


def _scan(path: str) -> dict:
    from stripebench_tui.core.trace import open_trace

    start = time.perf_counter()
    trace = open_trace(path)
    scan = trace.scan_turns()
    if scan is None:
        raise SystemExit(f"{path} has a turn index already")
    turns = sum(1 for _ in scan)
    return {"scan_s": time.perf_counter() - start, "rss_mb": _rss_mb(), "turns": turns,
            "stored": (Path(path + ".d") / "turns.idx").is_file()}


def _child(kind: str, path: str) -> None:
    result = _scan(path) if kind == "scan" else asyncio.run(_first_paint(path))
    print(json.dumps(result))


def _run_child(kind: str, path: Path, cache: Path) -> dict:
    env = dict(os.environ, STRIPEBENCH_CACHE=str(cache))
    out = subprocess.run([sys.executable, __file__, "--child", kind, str(path)], capture_output=True, text=True,
                         check=False, env=env)
    if out.returncode != 0:
        raise SystemExit(f"{kind} on {path.name} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _forget(path: Path, cache: Path) -> None:
    """Make the next open cold: no index beside the trace, none in the cache."""
    shutil.rmtree(path.with_name(path.name + ".d"), ignore_errors=True)
    shutil.rmtree(cache, ignore_errors=True)


def _each(runs: list[dict]) -> str:
    return ", ".join(f"{r['first_paint_s']:.2f}" for r in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1_000_000, help="events in the trace (default 1M)")
    parser.add_argument("--runs", type=int, default=3, help="runs of each first paint (median reported)")
    parser.add_argument("--keep", type=Path, help="directory to keep (and reuse) the generated trace in")
    parser.add_argument("--child", nargs=2, metavar=("KIND", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(*args.child)
        return
    tmp = tempfile.TemporaryDirectory(prefix="cold_open_")
    folder = args.keep or Path(tmp.name)
    folder.mkdir(parents=True, exist_ok=True)
    cache = Path(tmp.name) / "cache"
    try:
        path = folder / f"synthetic-{args.events}.jsonl"
        if not path.exists():
            from stripebench_tui.testing import big_trace

            print(f"writing a {args.events:,}-event trace…", file=sys.stderr, flush=True)
            big_trace.write(path, args.events)
        # Cold and indexed paints alternate, so that a change in machine speed spreads over both.
        cold: list[dict] = []
        indexed: list[dict] = []
        scans: list[dict] = []
        for _ in range(args.runs):
            _forget(path, cache)
            cold.append(_run_child("first-paint", path, cache))
            scans.append(_run_child("scan", path, cache))
            if not scans[-1]["stored"]:
                raise SystemExit("the scan stored no index beside the trace")
            indexed.append(_run_child("first-paint", path, cache))
        mb = path.stat().st_size / 1e6
        paint_cold = statistics.median(r["first_paint_s"] for r in cold)
        paint_indexed = statistics.median(r["first_paint_s"] for r in indexed)
        rss_cold = max(r["rss_mb"] for r in cold)
        scan_s = statistics.median(r["scan_s"] for r in scans)
        print(f"{args.events:,} events, {mb:.0f} MB, {scans[0]['turns']:,} turns, no turn index")
        print(f"cold first paint     {paint_cold:6.2f} s (runs: {_each(cold)})  peak RSS {rss_cold:6.1f} MB"
              f"  ({cold[0]['turns_shown']} turns shown)")
        print(f"index scan + write   {scan_s:6.2f} s  peak RSS {max(r['rss_mb'] for r in scans):6.1f} MB")
        print(f"indexed first paint  {paint_indexed:6.2f} s (runs: {_each(indexed)})"
              f"  peak RSS {max(r['rss_mb'] for r in indexed):6.1f} MB")
        ok = paint_cold <= TARGET_PAINT_S and rss_cold <= TARGET_RSS_MB
        print(f"targets: cold first paint <= {TARGET_PAINT_S} s, its RSS <= {TARGET_RSS_MB} MB: "
              f"{'met' if ok else 'NOT met'}")
        print(f"cold/indexed first-paint ratio: {paint_cold / paint_indexed:.2f}")
    finally:
        tmp.cleanup()


if __name__ == "__main__":
    main()
