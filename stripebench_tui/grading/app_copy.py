"""A second copy of the environment's app, started by a grader on a free port with its own database.

Graders that must control what the app sees (a proxy in front of Stripe, webhooks only the grader delivers)
cannot use the episode's running app. ``AppCopy`` starts the manifest's service command again in the
workspace, with the episode's variables plus the grader's overrides: its own ``APP_PORT``/``APP_URL``, its own
``DATABASE_PATH`` (a fresh file, or a consistent copy of the workspace's database), optionally another
``STRIPE_API_BASE``. It waits for ``GET /health`` and stops the whole process group on ``close()``.
A copy that does not become healthy raises ``AppDown`` (a failing outcome for the app, not a grader error).
"""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from stripebench_tui.child_env import base_env
from stripebench_tui.grading.context import GradingUnavailable


class AppDown(Exception):
    """The app copy could not be started for grading (a failing outcome, not a grader error)."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class AppCopy:
    """The manifest's ``service`` started again for the grader; ``url``, ``http``, ``db_path``, ``close()``."""

    def __init__(self, ctx: Any, *, stripe_api_base: str | None = None, database: str | None = None,
                 unset: tuple[str, ...] = (), env: dict[str, str] | None = None, service: str = "app",
                 noun: str = "app", start_timeout: float = 30.0, http_timeout: float = 30.0) -> None:
        """Start the copy; ``database`` names a workspace file to copy (else a fresh ``grading.db``)."""
        spec = next((s for s in ctx.env.manifest.services if s.name == service), None)
        if spec is None:
            raise GradingUnavailable(f"the manifest has no {service!r} service to start")
        source = Path(ctx.workspace) / database if database else None
        if source is not None and not source.is_file():
            raise GradingUnavailable(f"no database at {source}")
        self.tmp = tempfile.TemporaryDirectory(prefix="grader-app-")
        self.db_path = Path(self.tmp.name) / (database if database else "grading.db")
        if source is not None:
            with sqlite3.connect(source) as src, sqlite3.connect(self.db_path) as dst:
                src.backup(dst)  # consistent even while the agent's app writes
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        full = base_env()  # never the runner's whole environment (a model provider's key): see child_env
        for name in unset:  # the grader's own environment must not leak into the copy
            full.pop(name, None)
        full.update({k: v for k, v in ctx.env_vars.items() if isinstance(v, str)})
        full.update(APP_PORT=str(port), APP_URL=self.url, DATABASE_PATH=str(self.db_path), PYTHONUNBUFFERED="1")
        if stripe_api_base is not None:
            full["STRIPE_API_BASE"] = stripe_api_base
        full.update(env or {})
        logs = Path(ctx.episode_dir) / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        self.log_path = logs / "grader-app.log"
        self._log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(["bash", "-c", spec.command], cwd=str(ctx.workspace), env=full,
                                     stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        self.http = httpx.Client(base_url=self.url, timeout=http_timeout, trust_env=False)
        deadline = time.monotonic() + start_timeout
        while True:
            try:
                if self.http.get("/health", timeout=2).status_code < 400:
                    return
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise AppDown(f"the grader's copy of the {noun} did not become healthy (see {self.log_path})")
            time.sleep(0.2)

    def close(self) -> None:
        """Stop the copy's process group (TERM, then KILL), reap it and delete its files."""
        self.http.close()
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(5)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait(5)
        self._log.close()
        self.tmp.cleanup()

    def __enter__(self) -> AppCopy:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


__all__ = ["AppCopy", "AppDown", "free_port"]
