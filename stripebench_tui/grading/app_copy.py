"""A second copy of the environment's app, started by a grader on a free port with its own database.

Graders that must control what the app sees (a proxy in front of Stripe, webhooks only the grader delivers)
cannot use the episode's running app. ``AppCopy`` starts the manifest's service command again in the
workspace, where the episode's code runs (``ctx.processes``: the episode's sandbox, so a docker episode's
copy runs in its container), with the episode's variables plus the grader's overrides: its own
``APP_PORT``/``APP_URL``, its own ``DATABASE_PATH`` (a fresh file, or a consistent copy of the workspace's
database), optionally another ``STRIPE_API_BASE``. It waits for ``GET /health`` (an app that could not bind its
port, taken by another process since it was chosen, is started again on a fresh one) and stops the whole process
group on ``close()``.
A copy that does not become healthy raises ``AppDown`` (a failing outcome for the app, not a grader error).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx

from stripebench_tui.envs.workspace import services_view
from stripebench_tui.grading.context import GradingContext, GradingUnavailable

HEALTH_TIMEOUT = 10.0  # one GET /health; the copy has ``start_timeout`` in all to answer one
START_ATTEMPTS = 3  # starts on a fresh port when the app could not bind the one it was given
PORT_TAKEN = re.compile(rb"address already in use|EADDRINUSE", re.IGNORECASE)


class AppDown(Exception):
    """The app copy could not be started for grading (a failing outcome, not a grader error)."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class AppCopy:
    """The manifest's ``service`` started again for the grader; ``url``, ``http``, ``db_path``, ``row_counts()``,
    ``close()``."""

    def __init__(self, ctx: GradingContext, *, stripe_api_base: str | None = None, database: str | None = None,
                 unset: tuple[str, ...] = (), env: dict[str, str] | None = None, service: str = "app",
                 noun: str = "app", start_timeout: float = 30.0, http_timeout: float = 30.0) -> None:
        """Start the copy; ``database`` names a workspace file to copy (else a fresh ``grading.db``)."""
        spec = next((s for s in ctx.env.manifest.services if s.name == service), None)
        if spec is None:
            raise GradingUnavailable(f"the manifest has no {service!r} service to start")
        source = Path(ctx.workspace) / database if database else None
        if source is not None and not source.is_file():
            raise GradingUnavailable(f"no database at {source}")
        processes = ctx.processes
        assert processes is not None  # GradingContext.__post_init__ sets it (this machine by default)
        self.scratch = processes.scratch_dir("grader-app-")  # the running copy reads and writes it at this path
        self.db_path = self.scratch / (database if database else "grading.db")
        if source is not None:
            with sqlite3.connect(source) as src, sqlite3.connect(self.db_path) as dst:
                src.backup(dst)  # consistent even while the agent's app writes
            # The copy may run as another user (a container's); the scratch directory itself stays private.
            os.chmod(self.db_path, 0o666)
        logs = Path(ctx.episode_dir) / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        self.log_path = logs / "grader-app.log"
        self._log = open(self.log_path, "ab")
        deadline = time.monotonic() + start_timeout
        for attempt in range(1, START_ATTEMPTS + 1):
            port = free_port()
            self.url = f"http://127.0.0.1:{port}"
            overrides = dict(APP_PORT=str(port), APP_URL=self.url, DATABASE_PATH=str(self.db_path),
                             PYTHONUNBUFFERED="1")
            if stripe_api_base is not None:
                overrides["STRIPE_API_BASE"] = stripe_api_base
            overrides.update(env or {})
            self._log.flush()
            log_from = self.log_path.stat().st_size
            # Where the episode's code runs (its container, in a docker episode): the grader never runs it itself.
            # In the full workspace, as the episode's services run (envs.workspace: the hidden paths with the rest).
            self.proc = processes.start_process(spec.command, cwd=services_view(ctx.env, Path(ctx.workspace)),
                                                env=overrides,
                                                unset=tuple(n for n in unset if n not in overrides), log=self._log)
            self.http = httpx.Client(base_url=self.url, timeout=http_timeout, trust_env=False)
            if self._healthy(deadline):
                return
            # The port was free when chosen; another process may have taken it before the app bound it.
            port_taken = self.proc.poll() is not None and PORT_TAKEN.search(self.log_path.read_bytes()[log_from:])
            if not port_taken or attempt == START_ATTEMPTS:
                break
            self._stop()
        self.close()
        raise AppDown(f"the grader's copy of the {noun} did not become healthy (see {self.log_path})")

    def row_counts(self) -> dict[str, int]:
        """Rows in each table of the copy's database (read-only; empty when it has none yet)."""
        if not self.db_path.is_file():
            return {}
        conn = sqlite3.connect(f"{self.db_path.resolve().as_uri()}?mode=ro", uri=True, timeout=10)
        try:
            tables = [name for (name,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
            return {name: conn.execute(f'SELECT COUNT(*) FROM "{name.replace(chr(34), chr(34) * 2)}"').fetchone()[0]
                    for name in tables}
        finally:
            conn.close()

    def _healthy(self, deadline: float) -> bool:
        """Wait until the copy answers ``GET /health``; False when it exits first or ``deadline`` passes."""
        while True:
            try:
                if self.http.get("/health", timeout=HEALTH_TIMEOUT).status_code < 400:
                    return True
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                return False
            time.sleep(0.2)

    def _stop(self) -> None:
        """Stop the copy's process group (TERM, then KILL) and reap it."""
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

    def close(self) -> None:
        """Stop the copy's process group (TERM, then KILL), reap it and delete its files."""
        self._stop()
        self._log.close()
        shutil.rmtree(self.scratch, ignore_errors=True)

    def __enter__(self) -> AppCopy:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


__all__ = ["AppCopy", "AppDown", "free_port"]
