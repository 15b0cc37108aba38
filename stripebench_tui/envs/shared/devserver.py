"""Serve ``app.py`` and restart it whenever the app's own files or its installed packages change.

This is how the app runs during development: ``python devserver.py`` (stripebench copies this file into the
workspace of every environment that lists it in ``shared``, so it runs with whatever python the app uses and
needs nothing but the standard library). Watched, checked every 0.3 s:

- this directory's ``*.py`` files, ``schema.sql`` and ``templates/*.html`` (more with ``--watch PATTERN``);
- the names of the distributions installed in ``.venv`` when there is one (an upgrade renames a ``.dist-info``).

Once they have been quiet for ``--settle`` seconds (0.4 by default; a ``pip install`` touches files over several
seconds, so give it 1 or more) the app restarts, so an edit of several files restarts it once. If the app exits
by itself it is started again, unless it died within two seconds of starting (a crash): then it waits for the
next change. SIGTERM or SIGINT stops the app and the dev server.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
WATCHED = ("*.py", "schema.sql", "templates/*.html")
DISTRIBUTIONS = ".venv/lib/python*/site-packages/*.dist-info"
POLL = 0.3
CRASH_WINDOW = 2.0

Snapshot = tuple[tuple[tuple[str, int], ...], tuple[str, ...]]


def snapshot(root: Path, patterns: tuple[str, ...]) -> Snapshot:
    """What a restart depends on: the watched files' modification times and the installed distributions."""
    files = {str(p.relative_to(root)): p.stat().st_mtime_ns for pattern in patterns for p in root.glob(pattern)
             if p.is_file()}
    dists = sorted(p.name for p in root.glob(DISTRIBUTIONS))
    return tuple(sorted(files.items())), tuple(dists)


def settle(root: Path, patterns: tuple[str, ...], quiet: float) -> None:
    """Wait until nothing watched has changed for ``quiet`` seconds."""
    last, since = snapshot(root, patterns), time.monotonic()
    while time.monotonic() - since < quiet:
        time.sleep(min(POLL, quiet))
        now = snapshot(root, patterns)
        if now != last:
            last, since = now, time.monotonic()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Run app.py and restart it when its files or packages change.")
    parser.add_argument("--app", default="app.py", help="the script to run, relative to this directory (app.py)")
    parser.add_argument("--watch", action="append", default=[], metavar="PATTERN",
                        help="one more glob to watch, relative to this directory (repeatable)")
    parser.add_argument("--settle", type=float, default=0.4, metavar="SECONDS",
                        help="how long the files must stay unchanged before a restart (0.4)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    patterns = WATCHED + tuple(args.watch)
    child: subprocess.Popen[bytes] | None = None

    def stop(*_args: object) -> None:
        if child is not None and child.poll() is None:
            child.terminate()
            child.wait()
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while True:
        before = snapshot(HERE, patterns)
        started = time.monotonic()
        child = subprocess.Popen([sys.executable, str(HERE / args.app)], cwd=HERE, env=os.environ.copy())
        crashed = False
        while snapshot(HERE, patterns) == before:
            if child.poll() is not None and not crashed:
                if time.monotonic() - started > CRASH_WINDOW:
                    print(f" * devserver: the app exited (code {child.returncode}); starting it again", flush=True)
                    break
                crashed = True
                print(f" * devserver: the app crashed (code {child.returncode}); waiting for a change", flush=True)
            time.sleep(POLL)
        else:
            settle(HERE, patterns, args.settle)
            print(" * devserver: a file changed; restarting the app", flush=True)
        if child.poll() is None:
            child.terminate()
            child.wait()


if __name__ == "__main__":
    main()
