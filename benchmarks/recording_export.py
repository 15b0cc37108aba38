"""What `stripebench export --format cast|gif` costs: time and size, the short sample vs a 500-turn episode.

A recording takes as long as its playback (the TUI is filmed in real time), so
time is reported against the recording's own length; what should not grow with
the episode is the cost per recorded second and the bytes per turn. The short
sample is replays/checkout-migration-400 (12 turns); the long one is a
synthetic trace of 500 turns or a few more (``stripebench_tui.testing.big_trace``: ~7,000 events).
Both are filmed at --speed 100 (each turn on screen for one presenter tick,
0.1 s) in a 160x45 terminal, then rendered to a GIF with a 10 MB budget.

The last line printed is the ratio of cast bytes per turn, 500-turn episode
over sample (near 1 means a recording grows with its turns and nothing else).

    python benchmarks/recording_export.py
    python benchmarks/recording_export.py --no-gif     # casts only (the GIF of 500 turns takes minutes here)
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "replays" / "checkout-migration-400"
SPEED = "100"


def export(trace: Path, fmt: str, out: Path, *extra: str) -> float:
    """Wall seconds `stripebench export` took."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "stripebench_tui", "export", str(trace), "--format", fmt,
                           "--speed", SPEED, "--size", "160x45", "-o", str(out), "--force", *extra],
                          capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        sys.exit(f"export failed: {done.stderr.strip().splitlines()[-1]}")
    return time.perf_counter() - start


def measure(name: str, trace: Path, folder: Path, gif: bool) -> float:
    """Print one row per format; returns the cast's bytes per turn."""
    from stripebench_tui.formats.open import open_episode
    from tests.formats.cast_screens import read_cast

    turns = len(open_episode(trace).index().turns)
    cast = folder / f"{name}.cast"
    seconds = export(trace, "cast", cast)
    _, events = read_cast(cast)
    length = events[-1][0] if events else 0.0
    size = cast.stat().st_size
    print(f"{name:>10} cast: {turns:4d} turns, {len(events):5d} events, {length:6.1f} s recorded, "
          f"{size / 1024:8.0f} KiB ({size / turns / 1024:5.1f} KiB/turn), exported in {seconds:6.1f} s "
          f"({seconds / max(length, 0.001):.2f} s per recorded s)")
    if gif:
        out = folder / f"{name}.gif"
        seconds = export(trace, "gif", out, "--max-mb", "10")
        print(f"{name:>10}  gif: {out.stat().st_size / 1048576:6.2f} MB, exported (filmed + rendered) in {seconds:6.1f} s")
    return size / turns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--no-gif", action="store_true", help="measure the casts only")
    parser.add_argument("--turns", type=int, default=500)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from stripebench_tui.testing import big_trace

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        big = folder / "big.jsonl"
        count = args.turns * 12  # events: grown until the synthetic episode has the turns asked for
        while max(ev.turn for ev in big_trace.events(count)) < args.turns:
            count = int(count * 1.05)
        big_trace.write(big, count)
        short = measure("sample", SAMPLE, folder, not args.no_gif)
        long = measure(f"{args.turns} turns", big, folder, not args.no_gif)
        print(f"cast bytes per turn, {args.turns}-turn episode / sample: {long / short:.2f}")


if __name__ == "__main__":
    main()
