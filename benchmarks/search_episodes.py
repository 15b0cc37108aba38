"""`stripebench search` over 100 episodes of 1,000 turns: first query (building the indexes), then a repeated one,
against a plain scan of the traces (the same search reading every trace, no index), side by side.

The episodes are synthetic (``stripebench_tui.testing.big_trace``: a busy run's mix of messages, tool calls, Stripe
requests with some 4xx, results, objects, verdict changes and findings), 12,000 events each. Each query is run in
this process, wall time and CPU time; the repeated query also several times (best of 5). Targets (issue 33): the
repeated query ≥ 20× faster than the plain scan, and under 1 s.

    python benchmarks/search_episodes.py [--episodes 100] [--turns 1000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stripebench_tui.search import INDEX_NAME, search  # noqa: E402
from stripebench_tui.testing import big_trace  # noqa: E402

QUERIES = ("request:'POST /v1/refunds' status:4xx", "finding:400-as-success", "verdict:fail criterion:paid",
           "of step 777:")


def timed(root: Path, query: str, use_index: bool) -> tuple[float, float, int]:
    wall, cpu = time.perf_counter(), time.process_time()
    found = search(root, query, use_index=use_index)
    return time.perf_counter() - wall, time.process_time() - cpu, sum(len(e.hits) for e in found.episodes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--keep", type=Path, help="keep (and reuse) the episodes in this directory")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="search-bench-"))
    made = 0
    for n in range(args.episodes):
        trace = root / f"ep{n:03d}" / "trace.jsonl"
        if not trace.is_file():
            trace.parent.mkdir(parents=True, exist_ok=True)
            big_trace.write(trace, args.turns * 12, turns=args.turns, seed=n)
            made += 1
    for index in root.glob(f"*/{INDEX_NAME}"):
        index.unlink()  # the first query builds them
    size = sum(p.stat().st_size for p in root.glob("*/trace.jsonl"))
    print(f"{args.episodes} episodes × {args.turns} turns ({size / 1e6:.0f} MB of traces; {made} written now)")

    first = timed(root, QUERIES[0], use_index=True)
    print(f"first query (builds {args.episodes} indexes): {first[0]:7.2f} s wall {first[1]:7.2f} s CPU  {first[2]} hits")
    print(f"{'query':<44} {'plain scan':>11} {'indexed':>9} {'ratio':>7}  hits")
    ratios = []
    worst = 0.0
    for query in QUERIES:
        scan = timed(root, query, use_index=False)
        indexed = min((timed(root, query, use_index=True) for _ in range(5)), key=lambda r: r[0])
        assert scan[2] == indexed[2], f"{query}: the index found {indexed[2]} hits, the scan {scan[2]}"
        ratios.append(scan[0] / indexed[0])
        worst = max(worst, indexed[0])
        print(f"{query:<44} {scan[0]:9.2f} s {indexed[0]:7.3f} s {ratios[-1]:6.0f}×  {indexed[2]}")
    print(f"repeated query vs plain scan: {min(ratios):.0f}× at least (target ≥ 20×); slowest repeated query "
          f"{worst:.3f} s (target < 1 s)")
    if args.keep is None:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
