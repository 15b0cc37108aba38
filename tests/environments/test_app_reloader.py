"""The in-process reloader of the Flask apps (bookings-payments, idempotent-payments, invoicing-migration,
subscription-gym) never loses an edit.

An edit that lands while a reloaded process is still starting (reading its code, importing Flask) must count as a
change to that process. The old process hands the new one what it saw (APP_RELOAD_SEEN) before the new one reads
any code; a new process that finds the files newer than that reloads again. This was a load-dependent grading bug:
on a busy machine a mutant's edit landed during such a start, the app kept serving the solution and scored 1.0.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "environments"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _environ(pid: int) -> dict[str, str]:
    """The process's environment; empty while it cannot be read: the reloader calls execv from its watcher thread,
    and while the kernel makes that thread the process's leader, /proc/PID answers ESRCH (the caller's poll()
    tells an exit apart)."""
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except ProcessLookupError:
        return {}
    return dict(item.split("=", 1) for item in raw.decode("utf-8", "replace").split("\0") if "=" in item)


def _snapshot(folder: Path) -> str:
    return repr(sorted((p.name, p.stat().st_mtime_ns) for p in folder.iterdir() if p.name.endswith(".py")))


@pytest.mark.parametrize("env", ["bookings-payments", "idempotent-payments", "invoicing-migration",
                                 "subscription-gym"])
def test_an_edit_made_while_the_app_starts_is_reloaded(env: str, tmp_path: Path) -> None:
    work = tmp_path / "app"
    shutil.copytree(ROOT / env / "workspace", work)
    # What the previous process saw: app.py as it was before an edit that then landed during this start.
    seen = [(name, mtime - 1_000_000_000 if name == "app.py" else mtime) for name, mtime in eval(_snapshot(work))]
    env_vars = {**os.environ, "APP_PORT": str(_free_port()), "APP_RELOAD_SEEN": repr(sorted(seen)),
                "PYTHONDONTWRITEBYTECODE": "1"}
    app = subprocess.Popen([sys.executable, "app.py"], cwd=work, env=env_vars,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # The process re-executes itself (same pid) with what it now sees: the files as they are.
        current = _snapshot(work)
        deadline = time.monotonic() + 60  # ends only a stuck reloader; a slow start just takes longer
        while _environ(app.pid).get("APP_RELOAD_SEEN") != current:
            assert app.poll() is None, f"the app exited with {app.returncode}"
            assert time.monotonic() < deadline, "the app never reloaded the edit made while it started"
            time.sleep(0.05)
    finally:
        app.terminate()
        app.wait(10)
