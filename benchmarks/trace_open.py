"""How the replay TUI scales with trace size: first paint, seek to the last turn, peak memory.

Generates a 100-event and a 100k-event trace (~200 MB with tool outputs, some
in sidecars) with the real TraceWriter, then for each one measures, in a fresh
subprocess so that memory figures are clean:

  * first paint: open_episode → the screen shows the timeline and the first turn
    (headless Textual run via App.run_test), median (and best) of 9 runs, the
    small and large runs alternating;
  * seek: with the index built, the time from pressing End (at the first
    turn) to the frame that shows the last turn, median of 5 (also the best,
    the first press, which draws the last turn for the first time, and the
    process CPU time, which a loaded machine disturbs less); End reuses the
    whole-episode state and the later presses what was drawn for it, so a
    jump to a middle turn and a bare Trace.state_at lookup are measured too;
  * peak RSS of that process (resource.getrusage), index included.

Targets (issue #2, tightened by #13): first-paint ratio large/small ≤ 1.2; seek ≤ 30 ms
at any size; RSS with the large trace ≤ 300 MB. The last line printed is the first-paint ratio.

    python benchmarks/trace_open.py            # generate in a temp dir, measure, clean up
    python benchmarks/trace_open.py --keep DIR # keep (and reuse) the generated traces in DIR
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SIZE = (160, 45)
SMALL_EVENTS = 100
LARGE_EVENTS = 100_000
SEEKS = 5  # End presses per trace (each after a jump back to the first turn)
PAINT_RUNS = 9  # a shared machine is noisy: report the median and the best


def generate(path: Path, events: int, seed: int = 7) -> None:
    """Write a checkout-like trace of ``events`` events: message, call, result, then an object or a verdict."""
    from stripebench_tui.core.events import GraderVerdict, Header, ModelMessage, StripeObject, ToolCall, ToolResult
    from stripebench_tui.core.trace import TraceWriter

    rng = random.Random(seed)
    words = "checkout session price line_items webhook customer intent succeeded metadata mode payment".split()
    log_line = "GET /v1/checkout/sessions/cs_test_{:06d}?expand[]=line_items 200 OK in {:3d}ms\n"
    header = Header(env="checkout-migration", agent="bench", model="bench-model", title=f"{events} events")
    t = 0.0
    with TraceWriter(path, header) as w:
        turn = 0
        written = 0
        while written < events:
            turn += 1
            t += rng.uniform(0.5, 3.0)
            text = " ".join(rng.choice(words) for _ in range(40))
            batch = [
                ModelMessage(t=t, turn=turn, text=text, tokens_in=2000, tokens_out=150, cost_usd=0.002),
                ToolCall(t=t + 0.1, turn=turn, call_id=f"c{turn}", tool="shell", arguments={"command": f"python step_{turn}.py"}),
            ]
            # Mostly ~7 KB of output; every 500th turn a 1 MB one (goes to a sidecar).
            lines = 4000 if turn % 500 == 0 else 60 + rng.randrange(60)
            output = "".join(log_line.format(turn * 7 + i, i % 997) for i in range(lines))
            batch.append(ToolResult(t=t + 0.9, turn=turn, call_id=f"c{turn}", tool="shell", output=output, exit_code=0, duration=0.8))
            if turn % 50 == 0:
                batch.append(GraderVerdict(t=t + 1.0, turn=turn, criterion=f"criterion_{turn % 7}", status=rng.choice(["pass", "fail", "pending"])))
            else:
                oid = f"cs_test_{turn % 2000:06d}"
                data = {"id": oid, "object": "checkout.session", "status": rng.choice(["open", "complete"]), "amount_total": 2000,
                        "metadata": {"turn": str(turn)}}
                batch.append(StripeObject(t=t + 1.0, turn=turn, object_id=oid, object_type="checkout.session", data=data))
            for ev in batch[: events - written]:
                w.write(ev)
            written += len(batch)
            w.end_turn() if turn % 100 == 0 else None


def _when_painted(app, predicate) -> dict:
    """Record the time of the first frame the app renders while ``predicate()`` holds.

    Headless apps render every frame but skip writing it; ``App._display`` is where
    a frame would go to the terminal, so that is the moment a user would see it.
    """
    seen: dict = {"t": None}
    original = app._display

    def display(screen, renderable):  # noqa: ANN001
        original(screen, renderable)
        if seen["t"] is None and renderable is not None and predicate():
            seen["t"] = time.perf_counter()

    app._display = display
    return seen


async def _until(seen: dict, timeout: float = 60.0) -> None:
    deadline = time.perf_counter() + timeout
    while seen["t"] is None:
        if time.perf_counter() > deadline:
            raise SystemExit("timed out waiting for a frame")
        await asyncio.sleep(0.001)


async def _first_paint(path: str) -> dict:
    from stripebench_tui.formats.open import open_episode
    from stripebench_tui.tui.apps.replay_app import create_app
    from stripebench_tui.tui.sources.episode_source import TraceSource

    start = time.perf_counter()
    app = create_app(TraceSource(open_episode(path)))
    # First paint: the first frame that shows the timeline and the first turn's detail.
    seen = _when_painted(app, lambda: getattr(app.screen, "turn", None) is not None)
    async with app.run_test(size=SIZE):
        await _until(seen)
        app.exit()
    return {"first_paint_s": seen["t"] - start, "rss_mb": _rss_mb()}


async def _seek(path: str) -> dict:
    from textual import events

    from stripebench_tui.formats.open import open_episode
    from stripebench_tui.tui.apps.replay_app import create_app
    from stripebench_tui.tui.sources.episode_source import TraceSource

    start = time.perf_counter()
    trace = open_episode(path)
    app = create_app(TraceSource(trace))
    async with app.run_test(size=SIZE) as pilot:
        screen = app.episode
        while not screen.indexed:
            await asyncio.sleep(0.005)
        await pilot.pause()
        indexed = time.perf_counter() - start
        # A trace without findings gets the detectors run over it once indexed (tui/actions/derived_findings.py):
        # let them finish, or the seeks would share the CPU with them.
        while getattr(screen, "deriving", False):
            await asyncio.sleep(0.005)
        await pilot.pause()
        last = len(screen.turns) - 1
        walls, cpus = [], []
        for _ in range(SEEKS):
            screen.action_first_turn()
            await pilot.pause(0.05)
            seen = _when_painted(app, lambda: screen.position == last)
            # Post the key as the terminal driver would (Pilot.press adds waits of its own).
            t0, c0 = time.perf_counter(), time.process_time()
            app.post_message(events.Key("end", None))
            await _until(seen)
            walls.append(seen["t"] - t0)
            cpus.append(time.process_time() - c0)
        # A turn in the middle: nothing cached for it (End reuses the whole-episode state).
        middle = len(screen.turns) // 2
        seen = _when_painted(app, lambda: screen.position == middle)
        t0 = time.perf_counter()
        screen.timeline.move_to(middle, post=True)  # what a click on that row does
        await _until(seen)
        seek_middle = seen["t"] - t0
        t1 = time.perf_counter()
        trace.state_at(screen.turns[middle - 1])
        lookup = time.perf_counter() - t1
        app.exit()
    return {
        "index_s": indexed,
        "seek_s": statistics.median(walls),
        "seek_first_s": walls[0],
        "seek_min_s": min(walls),
        "seek_cpu_s": statistics.median(cpus),
        "seek_middle_s": seek_middle,
        "state_lookup_s": lookup,
        "rss_mb": _rss_mb(),
    }


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def _child(kind: str, path: str) -> None:
    result = asyncio.run(_first_paint(path) if kind == "first-paint" else _seek(path))
    print(json.dumps(result))


def _run_child(kind: str, path: Path) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(path)], capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        raise SystemExit(f"{kind} on {path.name} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _dir_mb(path: Path) -> float:
    total = path.stat().st_size
    side = path.with_name(path.name + ".d")
    if side.is_dir():
        total += sum(p.stat().st_size for p in side.rglob("*") if p.is_file())
    return total / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keep", type=Path, help="directory to keep (and reuse) the generated traces in")
    parser.add_argument("--child", nargs=2, metavar=("KIND", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(*args.child)
        return
    tmp = None
    if args.keep:
        folder = args.keep
        folder.mkdir(parents=True, exist_ok=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="trace_open_")
        folder = Path(tmp.name)
    try:
        paint: dict[str, float] = {}
        best: dict[str, float] = {}
        paths = {}
        for name, count in (("small", SMALL_EVENTS), ("large", LARGE_EVENTS)):
            path = paths[name] = folder / f"{name}.jsonl"
            if not path.exists():
                print(f"generating {name} trace ({count:,} events)…", file=sys.stderr, flush=True)
                t0 = time.perf_counter()
                generate(path, count)
                print(f"  written in {time.perf_counter() - t0:.1f}s", file=sys.stderr, flush=True)
        # First paints of the two sizes alternate, so that a change in machine speed between runs (a shared VM
        # drifts by tens of percent within a minute) spreads over both instead of skewing their ratio one way.
        runs: dict[str, list[dict]] = {"small": [], "large": []}
        for i in range(PAINT_RUNS):
            for name in (("small", "large") if i % 2 == 0 else ("large", "small")):
                runs[name].append(_run_child("first-paint", paths[name]))
        for name, count in (("small", SMALL_EVENTS), ("large", LARGE_EVENTS)):
            path = paths[name]
            seek = _run_child("seek", path)
            paint[name] = statistics.median(r["first_paint_s"] for r in runs[name])
            best[name] = min(r["first_paint_s"] for r in runs[name])
            each = ", ".join(f"{r['first_paint_s'] * 1000:.0f}" for r in runs[name])
            print(
                f"{name:5}  {count:>7,} events  {_dir_mb(path):7.1f} MB on disk  "
                f"first paint {paint[name] * 1000:7.1f} ms (runs: {each})  "
                f"index {seek['index_s']:6.2f} s  seek to last {seek['seek_s'] * 1000:6.1f} ms "
                f"(best {seek['seek_min_s'] * 1000:.1f}, first {seek['seek_first_s'] * 1000:.1f}, "
                f"CPU {seek['seek_cpu_s'] * 1000:.1f}, "
                f"to a middle turn {seek['seek_middle_s'] * 1000:.1f} ms, "
                f"state lookup alone {seek['state_lookup_s'] * 1000:.1f} ms)  "
                f"peak RSS {max(seek['rss_mb'], *(r['rss_mb'] for r in runs[name])):6.1f} MB",
                flush=True,
            )
        print("targets: first-paint ratio <= 1.2, seek <= 30 ms at any size, large RSS <= 300 MB")
        print(f"first-paint ratio of the best runs large/small: {best['large'] / best['small']:.2f}")
        print(f"first-paint ratio large/small: {paint['large'] / paint['small']:.2f}")
    finally:
        if tmp is not None:
            tmp.cleanup()


if __name__ == "__main__":
    main()
