"""Serve the billing app with `python app.py` and restart it whenever one of the app's own files changes.

This is how the app runs during development: `python devserver.py`. Only this directory's
*.py files, schema.sql and templates are watched (checked every 0.3 s); once they have been
quiet for 0.4 s the app restarts, so an edit of several files restarts it once. If the app
exits by itself it is started again, unless it died within two seconds of starting (a crash):
then it waits for the next change.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
WATCHED = ("*.py", "schema.sql", "templates/*.html")
POLL = 0.3
QUIET = 0.4  # seconds without further changes before a restart
CRASH_WINDOW = 2.0


def snapshot() -> dict[Path, int]:
    """Modification times of the watched files."""
    return {p: p.stat().st_mtime_ns for pattern in WATCHED for p in HERE.glob(pattern) if p.is_file()}


def settle() -> None:
    """Wait until the files stop changing, so that an edit of several files restarts the app once."""
    last = snapshot()
    while True:
        time.sleep(QUIET)
        now = snapshot()
        if now == last:
            return
        last = now


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
