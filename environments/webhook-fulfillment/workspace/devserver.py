"""Run app.py and restart it when the shop's own files change: `python devserver.py`.

Watched: this directory's *.py files, schema.sql and templates. If the app dies within two
seconds of starting it waits for the next change.
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
    """Modification times of the watched files."""
    files = [*HERE.glob("*.py"), *HERE.glob("schema.sql"), *HERE.glob("templates/*.html")]
    return tuple(sorted((str(p), p.stat().st_mtime_ns) for p in files if p.is_file()))


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
            print(" * devserver: a file changed; restarting the app", flush=True)
        if child.poll() is None:
            child.terminate()
            child.wait()


if __name__ == "__main__":
    main()
