"""Batch throughput: 12 backend episodes on the local pool with 1, 2 and 4 workers, and on a two-node Ray cluster.

    python benchmarks/batch_scaling.py [--runs 4] [--agents oracle] [--no-ray]

The matrix is every backend environment × the agents × runs (3 × 1 × 4 = 12 oracle episodes by default),
each episode its own `stripebench run --headless` process, exactly as `stripebench batch` runs them. One
untimed episode per environment first builds its dependency venv. The Ray side starts a local cluster
(`ray start --head` plus a second node on loopback, one CPU each: 2 slots) and compares it with the local
pool at 2 workers (run again right after Ray: the ratio uses the mean of both); cluster start-up is reported but
not timed into the batch. Prints episodes per minute
for each, the 1→2 worker speed-up (target ≥ 1.7× on this 2-core machine) and, on the last line, the
Ray/local ratio at 2 workers (target ≥ 0.85: within 15 %).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stripebench_tui.batch import create_runner  # noqa: E402
from stripebench_tui.batch.manifest import Batch  # noqa: E402
from stripebench_tui.batch.matrix import build_cells, parse_agents, resolve_environments  # noqa: E402
from stripebench_tui.batch.runner import run_batch  # noqa: E402


class Quiet:
    def started(self, *a: Any) -> None: ...

    def line(self, *a: Any) -> None: ...

    def ended(self, cell: Any, result: dict[str, Any]) -> None:
        if result["status"] not in ("passed", "failed"):
            print(f"  {cell.id}: {result['status']} {result.get('error', '')}", file=sys.stderr)


def timed_batch(root: Path, name: str, cells: list[Any], runner: Any) -> float:
    batch = Batch.create(root / name, {"benchmark": name}, cells)
    started = time.perf_counter()
    run_batch(batch, runner, Quiet(), threading.Event())
    elapsed = time.perf_counter() - started
    assert not batch.pending(), f"{name}: {len(batch.pending())} episodes did not finish"
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--agents", default="oracle")
    parser.add_argument("--no-ray", action="store_true")
    parser.add_argument("--ray-copy", choices=("auto", "always"), default="auto",
                        help="always: episodes come back packed, as from nodes of other machines")
    args = parser.parse_args()
    envs = resolve_environments([], category="backend")
    cells = build_cells(envs, parse_agents(args.agents), args.runs, 0)
    root = Path(tempfile.mkdtemp(prefix="batch-scaling-"))
    print(f"{len(cells)} episodes ({len(envs)} backend environments × {args.agents} × {args.runs} runs) in {root}")
    warm = build_cells(envs, parse_agents("oracle"), 1, 0)
    timed_batch(root, "warm-up", warm, create_runner("local", workers=2))
    rates: dict[str, float] = {}
    for workers in (1, 2, 4):
        seconds = timed_batch(root, f"local-{workers}", cells, create_runner("local", workers=workers))
        rates[f"local-{workers}"] = len(cells) / seconds * 60
        print(f"local pool, {workers} worker(s): {seconds:6.1f} s  {rates[f'local-{workers}']:5.1f} episodes/min")
    print(f"speed-up 1→2 workers: {rates['local-2'] / rates['local-1']:.2f}× (target ≥ 1.7×); "
          f"1→4: {rates['local-4'] / rates['local-1']:.2f}×")
    if args.no_ray:
        return
    from tests.batch.ray_cluster import LocalCluster

    cluster = LocalCluster(dict(os.environ)).start()
    try:
        print(f"ray cluster (2 nodes × 1 CPU) started in {cluster.startup_seconds:.1f} s")
        os.environ["RAY_AUTH_MODE"] = "disabled"
        seconds = timed_batch(root, "ray-2", cells, create_runner("ray", address=cluster.address, workers=2,
                                                                   copy=args.ray_copy))
        rates["ray-2"] = len(cells) / seconds * 60
        print(f"ray, 2 slots:               {seconds:6.1f} s  {rates['ray-2']:5.1f} episodes/min")
        # The local pool again, right after Ray, the cluster still up (its idle cost on both sides): Ray is compared
        # with the mean of the local runs before and after it, so a machine whose load drifts skews it less.
        again = timed_batch(root, "local-2-again", cells, create_runner("local", workers=2))
    finally:
        cluster.stop()
    rates["local-2-again"] = len(cells) / again * 60
    print(f"local pool, 2 worker(s):    {again:6.1f} s  {rates['local-2-again']:5.1f} episodes/min (again, after ray)")
    local = (rates["local-2"] + rates["local-2-again"]) / 2
    print(f"ray/local at 2 workers: {rates['ray-2'] / local:.2f} (target ≥ 0.85; local = mean of the runs around ray)")


if __name__ == "__main__":
    main()
