"""Load-independent cost of a replay seek: Python function calls and lines drawn per seek, counted by cProfile.

A shared machine makes wall and CPU times of ``trace_open.py`` noisy; the number
of function calls a seek makes, and how many lines each pane draws for it, are
not. Runs on a trace written by ``trace_open.py --keep DIR``:

    python benchmarks/seek_calls.py DIR/large.jsonl          # End from the first turn, 10 times
    python benchmarks/seek_calls.py DIR/large.jsonl --step   # one turn back from the end, 10 times

Compare two trees by running it with each on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import trace_open as bench  # noqa: E402  (the same app set-up and frame detection)


async def measure(path: str, seeks: int, step: bool) -> str:
    from textual import events

    from stripebench_tui.formats.open import open_episode
    from stripebench_tui.tui.apps.replay_app import create_app
    from stripebench_tui.tui.sources.episode_source import TraceSource

    app = create_app(TraceSource(open_episode(path)))
    prof = cProfile.Profile()
    async with app.run_test(size=bench.SIZE) as pilot:
        screen = app.episode
        while not screen.indexed or getattr(screen, "deriving", False):
            await asyncio.sleep(0.005)
        await pilot.pause()
        last = len(screen.turns) - 1
        if step:
            screen.action_last_turn()
        for i in range(seeks):
            target = last - 1 - i if step else last
            if not step:
                screen.action_first_turn()
            await pilot.pause(0.05)
            seen = bench._when_painted(app, lambda: screen.position == target)
            prof.enable()
            app.post_message(events.Key("left" if step else "end", None))
            await bench._until(seen)
            prof.disable()
        app.exit()
    stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    total = sum(nc for (_, _, _), (_, nc, *_rest) in stats.items())
    drawn: dict[str, int] = {}
    for (file, _line, name), (_cc, nc, *_rest) in stats.items():
        if name == "render_line" and "_styles_cache" not in file:
            key = Path(file).stem
            drawn[key] = drawn.get(key, 0) + nc
    lines = ", ".join(f"{k} {v / seeks:.0f}" for k, v in sorted(drawn.items()))
    kind = "one turn back" if step else "End from the first turn"
    return f"{Path(path).name} {kind}: {total / seeks:,.0f} function calls per seek; lines drawn per seek: {lines}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trace", type=Path)
    parser.add_argument("--step", action="store_true", help="step one turn back from the end instead of End")
    parser.add_argument("--seeks", type=int, default=10)
    args = parser.parse_args()
    if not args.trace.is_file():
        raise SystemExit(f"no such trace: {args.trace}")
    print(asyncio.run(measure(str(args.trace), args.seeks, args.step)))


if __name__ == "__main__":
    main()
