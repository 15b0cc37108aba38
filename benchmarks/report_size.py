"""How `stripebench report` scales: size, build time and time to open in Chromium, sample replay vs 10k turns.

Measures the HTML report of the largest sample replay (by trace size) and of a
synthetic 10,000-turn trace written with the real TraceWriter (checkout-like
turns with ~4-8 KB outputs, every 500th a 1 MB one in a sidecar, verdicts
changing every 50 turns, a screenshot every 1,000 turns, notes and findings).
For each: build time (trace → HTML string, best of 3), report size, and the
time Debian's Chromium takes to load it (navigation start to the load event,
every request but the report's own refused), best of 3. Both are also given as
CPU time (this process for the build; Chromium's processes for the load), which
a loaded machine disturbs much less than the wall clock.

Targets (issue #14): the 10k-turn report builds in < 5 s and opens in < 2 s;
long outputs are cut, so the report grows with turns, not with output bytes.
The last line printed is the report/trace size ratio of the 10k-turn trace.

    python benchmarks/report_size.py
    python benchmarks/report_size.py --keep DIR   # keep (and reuse) the generated trace in DIR
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TURNS = 10_000
RUNS = 3


def generate(directory: Path, turns: int, seed: int = 14) -> Path:
    """A synthetic episode directory with ``turns`` turns; returns its trace path."""
    from stripebench_tui.core.annotations import Annotations
    from stripebench_tui.core.events import Finding, GraderVerdict, Header, ModelMessage, StripeObject, ToolCall, ToolResult
    from stripebench_tui.core.trace import TraceWriter

    rng = random.Random(seed)
    directory.mkdir(parents=True, exist_ok=True)
    shots = directory / "screenshots"
    shots.mkdir(exist_ok=True)
    sample_png = next((ROOT / "replays").glob("*/screenshots/*.png"))
    words = "checkout session price line_items webhook customer intent succeeded metadata mode payment".split()
    log_line = "GET /v1/checkout/sessions/cs_test_{:06d}?expand[]=line_items 200 OK in {:3d}ms\n"
    criteria = [f"criterion_{i}" for i in range(7)]
    path = directory / "trace.jsonl"
    t = 0.0
    with TraceWriter(path, Header(env="checkout-migration", agent="bench", model="bench-model", title=f"{turns} turns")) as w:
        for c in criteria:
            w.write(GraderVerdict(t=0.0, turn=0, criterion=c, status="pending"))
        for turn in range(1, turns + 1):
            t += rng.uniform(0.5, 3.0)
            w.write(ModelMessage(t=t, turn=turn, text=" ".join(rng.choice(words) for _ in range(40)),
                                 tokens_in=2000, tokens_out=150, cost_usd=0.002))
            w.write(ToolCall(t=t + 0.1, turn=turn, call_id=f"c{turn}", tool="shell", arguments={"command": f"python step_{turn}.py"}))
            lines = 16000 if turn % 500 == 0 else 60 + rng.randrange(60)
            output = "".join(log_line.format(turn * 7 + i, i % 997) for i in range(lines))
            images = []
            if turn % 1000 == 0:
                name = f"screenshots/{turn:05d}.png"
                shutil.copyfile(sample_png, directory / name)
                images.append(name)
            w.write(ToolResult(t=t + 0.9, turn=turn, call_id=f"c{turn}", tool="shell", output=output, exit_code=0,
                               duration=0.8, images=images))
            if turn % 50 == 0:
                w.write(GraderVerdict(t=t + 1.0, turn=turn, criterion=criteria[turn // 50 % 7], status=rng.choice(["pass", "fail"])))
            else:
                oid = f"cs_test_{turn % 2000:06d}"
                w.write(StripeObject(t=t + 1.0, turn=turn, object_id=oid, object_type="checkout.session",
                                     data={"id": oid, "object": "checkout.session", "status": rng.choice(["open", "complete"])}))
            if turn % 700 == 0:
                w.write(Finding(t=t + 1.1, turn=turn, detector="400-as-success", message="called done after a 400",
                                evidence=[{"call_id": f"c{turn}"}]))
            if turn % 100 == 0:
                w.end_turn()
    notes = Annotations(path)
    for turn in range(250, turns + 1, 250):
        notes.add(turn, f"look at turn {turn}")
    return path


def build(path: Path) -> tuple[float, float, str]:
    """Best build time of RUNS (open, read, render), wall and CPU (a shared machine disturbs CPU less), and the HTML."""
    from stripebench_tui.formats.open import open_episode
    from stripebench_tui.formats.episode_report import build_report
    from stripebench_tui.formats.report_html import render_report

    best, best_cpu, html = float("inf"), float("inf"), ""
    for _ in range(RUNS):
        t0, c0 = time.perf_counter(), time.process_time()
        html = render_report(build_report(open_episode(path)))
        best, best_cpu = min(best, time.perf_counter() - t0), min(best_cpu, time.process_time() - c0)
    return best, best_cpu, html


def tree_cpu_seconds() -> float:
    """CPU time (user + system) of every live process descended from this one: Playwright's driver and Chromium's.

    On a shared machine a page's wall-clock load time mostly measures the queue for a core; the CPU the
    browser's processes spent is what the report costs to open.
    """
    tick = os.sysconf("SC_CLK_TCK")
    parent: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        pid = int(stat.parent.name)
        parent[pid] = int(fields[1])
        cpu[pid] = (int(fields[11]) + int(fields[12])) / tick
    mine, total = {os.getpid()}, 0.0
    changed = True
    while changed:
        changed = False
        for pid, ppid in parent.items():
            if ppid in mine and pid not in mine:
                mine.add(pid)
                total += cpu[pid]
                changed = True
    return total


def open_times(browser, report: Path) -> tuple[float, float, int, list[str]]:  # noqa: ANN001
    """Best navigation-to-load time (s) of RUNS for the file, the browser CPU it took, its turns, requests it tried."""
    attempted: list[str] = []
    best, best_cpu, sections = float("inf"), float("inf"), 0
    for _ in range(RUNS):
        context = browser.new_context(viewport={"width": 1200, "height": 900})

        def refuse(r) -> None:  # noqa: ANN001
            if r.request.url == report.as_uri():
                r.continue_()  # the report itself, read from disk
                return
            attempted.append(r.request.url)
            r.abort()

        context.route("**/*", refuse)
        page = context.new_page()
        page.goto("about:blank")
        cpu0 = tree_cpu_seconds()
        page.goto(report.as_uri(), wait_until="load", timeout=120000)
        best_cpu = min(best_cpu, tree_cpu_seconds() - cpu0)
        # Navigation start to the end of the load event, as the page's own clock saw it.
        load_ms = page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd")
        sections = page.evaluate("document.querySelectorAll('section.turn').length")
        best = min(best, load_ms / 1000)
        context.close()
    return best, best_cpu, sections, attempted


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.parent.rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="keep the generated trace in this directory (reused when present)")
    parser.add_argument("--turns", type=int, default=TURNS)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from playwright.sync_api import sync_playwright

    from stripebench_tui.chromium import launch_options

    sample = max((ROOT / "replays").glob("*/trace.jsonl"), key=lambda p: p.stat().st_size)
    tmp = None if args.keep else tempfile.TemporaryDirectory(prefix="report_size_")
    folder = args.keep if args.keep else Path(tmp.name)  # type: ignore[union-attr]
    try:
        synthetic = folder / f"synthetic-{args.turns}" / "trace.jsonl"
        if not synthetic.exists():
            print(f"generating a {args.turns:,}-turn trace…", file=sys.stderr, flush=True)
            t0 = time.perf_counter()
            generate(synthetic.parent, args.turns)
            print(f"  written in {time.perf_counter() - t0:.1f}s", file=sys.stderr, flush=True)
        rows = {}
        with sync_playwright() as p:
            browser = p.chromium.launch(**launch_options())
            for name, path in (("sample", sample), ("10k", synthetic)):
                build_s, build_cpu, html = build(path)
                report = folder / f"{name}.report.html"
                report.write_text(html, encoding="utf-8")
                open_s, open_cpu, sections, attempted = open_times(browser, report)
                size = len(html.encode("utf-8"))
                rows[name] = dict(build_s=build_s, build_cpu=build_cpu, open_s=open_s, open_cpu=open_cpu, size=size, trace=dir_bytes(path), turns=sections)
                print(f"{name:6} {path.parent.name:28} {sections:>6,} turns  trace {rows[name]['trace'] / 1e6:7.2f} MB  "
                      f"report {size / 1e6:6.2f} MB ({size / max(sections, 1) / 1024:.2f} KB/turn)  "
                      f"build {build_s:6.3f} s (CPU {build_cpu:.3f} s)  open in Chromium {open_s:6.3f} s (CPU {open_cpu:.3f} s)  requests attempted {len(attempted)}",
                      flush=True)
            browser.close()
        s, l = rows["sample"], rows["10k"]
        print(f"load average while measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        print("targets (10k turns): build < 5 s, open < 2 s; report size grows with turns, not with output bytes")
        print(f"10k/sample ratios: turns {l['turns'] / s['turns']:.0f}x  trace bytes {l['trace'] / s['trace']:.0f}x  "
              f"report bytes {l['size'] / s['size']:.0f}x  build time {l['build_s'] / s['build_s']:.0f}x "
              f"(CPU {l['build_cpu'] / max(s['build_cpu'], 1e-3):.0f}x)  open time {l['open_s'] / s['open_s']:.1f}x "
              f"(CPU {l['open_cpu'] / max(s['open_cpu'], 1e-3):.1f}x)")
        print(f"report/trace size ratio: sample {s['size'] / s['trace']:.2f}, 10k turns {l['size'] / l['trace']:.2f}")
    finally:
        if tmp is not None:
            tmp.cleanup()


if __name__ == "__main__":
    main()
