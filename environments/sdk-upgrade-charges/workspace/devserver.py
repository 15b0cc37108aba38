"""Run app.py and restart it when the service's code or its installed packages change.

`bash run.sh` starts this with the venv's python. Watched: this directory's *.py files and
the names of the packages installed in .venv (an upgrade renames stripe's .dist-info
directory). If the app dies within two seconds of starting it waits for the next change.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
POLL = 0.3
CRASH_WINDOW = 2.0
SETTLE = 1.0


def snapshot() -> tuple:
    """What a restart depends on: code modification times and installed distributions."""
    code = {p.name: p.stat().st_mtime_ns for p in HERE.glob("*.py") if p.is_file()}
    dists = sorted(p.name for p in HERE.glob(".venv/lib/python*/site-packages/*.dist-info"))
    return tuple(sorted(code.items())), tuple(dists)


def settle() -> None:
    """Wait until the watched files stop changing for SETTLE seconds (a pip install touches many, over seconds)."""
    last, since = snapshot(), time.monotonic()
    while time.monotonic() - since < SETTLE:
        time.sleep(POLL)
        now = snapshot()
        if now != last:
            last, since = now, time.monotonic()


def main() -> None:
    child: subprocess.Popen | None = None

    def stop(*_args: object) -> None:
        if child is not None and child.poll() is None:
            child.terminate()
            child.wait()
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while True:
        before = snapshot()
        started = time.monotonic()
        child = subprocess.Popen([sys.executable, str(HERE / "app.py")], cwd=HERE, env=os.environ.copy())
        crashed = False
        while snapshot() == before:
            if child.poll() is not None and not crashed:
                if time.monotonic() - started > CRASH_WINDOW:
                    print(f" * devserver: the app exited (code {child.returncode}); starting it again", flush=True)
                    break
                crashed = True
                print(f" * devserver: the app crashed (code {child.returncode}); waiting for a change", flush=True)
            time.sleep(POLL)
        else:
            settle()
            print(" * devserver: code or packages changed; restarting the app", flush=True)
        if child.poll() is None:
            child.terminate()
            child.wait()


if __name__ == "__main__":
    main()
