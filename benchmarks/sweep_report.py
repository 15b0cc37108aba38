"""How `stripebench batch report` scales: a sweep of 200 episodes, cold, in each format.

Builds a batch directory of 200 finished cells (10 environments' sample replays × 2 agents × 10 runs: the oracle
samples, and the 400-as-success sample on a tenth of the mutant's runs, so the findings tables have something to
count), then times, each in a fresh process (cold: nothing cached), `batch report DIR` as Markdown, CSV and JSON, and
`--format html` (the sweep file plus every run's episode report beside it). Prints seconds and sizes side by side,
and the ratios against the targets: the report under 5 s cold, the sweep's HTML file under 5 MB without screenshots.

    python benchmarks/sweep_report.py            # a temporary directory
    python benchmarks/sweep_report.py --keep DIR # keep (and reuse) the sweep in DIR
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from stripebench_tui.batch.manifest import Batch  # noqa: E402
from stripebench_tui.batch.matrix import Cell  # noqa: E402

REPLAYS = REPO / "replays"


def make_sweep(root: Path, runs: int = 10) -> Batch:
    samples = sorted(p.name for p in REPLAYS.iterdir() if p.name.endswith("-oracle"))[:10]
    cells, sources = [], {}
    for sample in samples:
        env = sample.removesuffix("-oracle")
        for agent in ("oracle", "mutant:400"):
            for run in range(1, runs + 1):
                cell = Cell(id=f"{env}__{agent.replace(':', '-')}__r{run}", env=env, env_ref=env, category="backend",
                            agent_label=agent, agent="oracle", options={}, run=run, seed=run, memory=1 << 30,
                            argv=["run", env])
                cells.append(cell)
                bad = agent != "oracle" and run == 1
                sources[cell.id] = REPLAYS / ("checkout-migration-400" if bad else sample)
    batch = Batch.create(root, {"runs": runs}, cells)
    for cell in cells:
        shutil.copytree(sources[cell.id], batch.start_attempt(cell, 1, "local"), dirs_exist_ok=True)
        batch.finish(cell, {"status": "passed", "attempts": 1})
    return batch


def timed(args: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "stripebench_tui", "batch", "report", *args], capture_output=True,
                          text=True, cwd=REPO)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"batch report {' '.join(args)} failed: {done.stderr.strip()}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="keep (and reuse) the sweep in this directory")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="sweep-report-"))
    sweep = work / "sweep"
    if not (sweep / "batch.json").is_file():
        make_sweep(sweep)
    episodes = sum(1 for _ in sweep.glob("*/episode/trace.jsonl"))
    print(f"sweep: {episodes} episodes in {sweep}")
    rows = []
    for fmt in ("md", "csv", "json"):
        seconds = timed([str(sweep), "--format", fmt])
        rows.append((fmt, seconds, (sweep / f"report.{fmt}").stat().st_size))
    html = work / "site" / "sweep.html"
    shutil.rmtree(html.parent, ignore_errors=True)
    html.parent.mkdir(parents=True)
    seconds = timed([str(sweep), "--format", "html", "-o", str(html)])
    pages = list((html.parent / "sweep-episodes").glob("*.html"))
    rows.append(("html + episode reports", seconds, html.stat().st_size))
    for name, secs, size in rows:
        print(f"{name:<24} {secs:6.2f} s cold   {size / 1e6:7.3f} MB")
    print(f"episode reports beside the HTML: {len(pages)}, {sum(p.stat().st_size for p in pages) / 1e6:.1f} MB")
    worst_text = max(secs for name, secs, _ in rows[:3])
    print(f"ratios: slowest text report / 5 s target = {worst_text / 5:.2f}; sweep HTML / 5 MB target = "
          f"{html.stat().st_size / 5e6:.3f}; html with episode reports / 5 s = {seconds / 5:.2f}")
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
