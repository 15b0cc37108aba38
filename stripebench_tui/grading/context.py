"""What a check may use: the episode's public surfaces (Stripe API, the app, its database, a browser).

Nothing here talks to an emulator-only endpoint, so the same checks run against
real Stripe test mode: ``ctx.stripe`` is the official SDK client pointed at the
episode's backend (``stripe_api_base`` None means api.stripe.com).
"""

from __future__ import annotations

import sqlite3
import subprocess
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Protocol

import httpx

from stripebench_tui.child_env import base_env
from stripebench_tui.chromium import launch_options
from stripebench_tui.core.events import SOURCE_HEADER, WebhookDelivery
from stripebench_tui.envs.deps import dependencies, with_bin_first, with_python_last
from stripebench_tui.envs.manifest import Environment
from stripebench_tui.preload import preload_env
from stripebench_tui.stripejs import route_stripe_js


class GradingUnavailable(RuntimeError):
    """A check asked for something this grading run does not have (no app URL, no database file)."""


class ProcessHost(Protocol):
    """Where a grader starts the agent's code (its copy of the app): the episode's sandbox, never beside it.

    The runtime's sandboxes implement this (``runtime.sandbox.Sandbox``); the episode hands its sandbox to the
    grading context, so a container episode's app copy runs in that container.
    """

    def start_process(self, command: str, *, cwd: Path, env: dict[str, str], unset: tuple[str, ...] = (),
                      log: BinaryIO) -> subprocess.Popen[bytes]:
        """``bash -c command`` in ``cwd`` with the episode's environment plus ``env`` minus ``unset``; own session."""
        ...

    def scratch_dir(self, prefix: str) -> Path:
        """A fresh directory here that started processes read and write at the same path."""
        ...


class ThisMachine:
    """The process host of a grading run that has no sandbox (tests, hand-made contexts): this machine as it is."""

    def __init__(self, env_vars: dict[str, str], env: Environment | None = None) -> None:
        self.env_vars = env_vars
        self.env = env

    def start_process(self, command: str, *, cwd: Path, env: dict[str, str], unset: tuple[str, ...] = (),
                      log: BinaryIO) -> subprocess.Popen[bytes]:
        """``bash -c command`` here: the allowed part of our environment (``child_env``), the episode's variables,
        ``env``, minus ``unset``."""
        full = {**base_env(), **{k: v for k, v in self.env_vars.items() if isinstance(v, str)}, **env}
        for name in unset:
            full.pop(name, None)
        deps = dependencies(self.env) if self.env is not None else None
        if deps is not None and deps.ready():  # the app's packages, as in the episode (see envs.deps)
            full["PATH"] = with_bin_first(deps.bin_dir, full.get("PATH"))
        full["PATH"] = with_python_last(full.get("PATH"))  # as the sandboxes do
        if self.env is not None and self.env.manifest.stripe_preload:  # as the sandboxes do (stripebench_tui.preload)
            full.update(preload_env(full))
        return subprocess.Popen(["bash", "-c", command], cwd=str(cwd), env=full, stdin=subprocess.DEVNULL,
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def scratch_dir(self, prefix: str) -> Path:
        """A fresh temporary directory."""
        return Path(tempfile.mkdtemp(prefix=prefix))


@dataclass
class GradingContext:
    """The episode a grader judges, and helpers to read its state through public means only."""

    env: Environment
    episode_dir: Path
    workspace: Path
    stripe_api_base: str | None
    stripe_api_key: str
    app_urls: dict[str, str] = field(default_factory=dict)
    env_vars: dict[str, str] = field(default_factory=dict)
    submission_path: Path | None = None
    http_timeout: float = 30.0  # only a stuck app takes this long, also on a loaded machine
    processes: ProcessHost | None = None  # where app copies run; None: this machine (no sandbox)
    # Where the webhook deliveries a check sends are recorded (the episode's request log puts them in the trace;
    # any thread may call it); None: nowhere (``stripebench grade`` after the episode).
    on_delivery: Callable[[WebhookDelivery], None] | None = None

    def __post_init__(self) -> None:
        self.episode_dir = Path(self.episode_dir)
        self.workspace = Path(self.workspace)
        if self.processes is None:
            self.processes = ThisMachine(self.env_vars, self.env)
        if self.submission_path is None and self.env.manifest.submission:
            self.submission_path = self.workspace / self.env.manifest.submission
        self._lock = threading.Lock()
        self._stripe: Any = None
        self._http: dict[str, httpx.Client] = {}
        self._browsers: list[Any] = []  # (playwright, browser) pairs opened by the current evaluation
        self._dbs: list[sqlite3.Connection] = []  # database connections opened by the current evaluation

    # ---- Stripe ----

    @property
    def stripe(self) -> Any:
        """An official ``stripe.StripeClient`` for the episode's backend and key (one per context).

        It speaks the SDK's pinned API version, whatever the account's default, so a grader sees the shapes it
        was written for; pass ``options={"stripe_version": …}`` on a call to read another version's shape.
        """
        with self._lock:
            if self._stripe is None:
                # the SDK and its requests transport take half a second to import: loaded by the first check that reads
                # Stripe (an external grader never does)
                import requests
                import stripe

                # Retries would hide a flaky backend from the verdict and cost latency; a failed read is an error.
                # The session's header tells the episode's request log that a grader asked (not the app).
                session = requests.Session()
                session.headers[SOURCE_HEADER] = "grader"
                self._stripe = stripe.StripeClient(self.stripe_api_key, max_network_retries=0,
                                                   base_addresses={"api": self.stripe_api_base} if self.stripe_api_base
                                                   else None,
                                                   http_client=stripe.RequestsClient(session=session))
            return self._stripe

    # ---- the app ----

    def http(self, name: str = "APP_URL") -> httpx.Client:
        """An httpx client whose base URL is the app's ``name`` URL (e.g. ``APP_URL``)."""
        with self._lock:
            client = self._http.get(name)
            if client is None:
                url = self.app_urls.get(name) or self.env_vars.get(name)
                if not url:
                    known = ", ".join(sorted(self.app_urls)) or "none"
                    raise GradingUnavailable(f"no app URL {name!r} in this grading run (known: {known}); is the app running?")
                client = httpx.Client(base_url=url, timeout=self.http_timeout, follow_redirects=False)
                self._http[name] = client
            return client

    def db(self, path: str | Path) -> sqlite3.Connection:
        """The app's SQLite database at ``path`` (relative to the workspace), read-only; closed after the evaluation."""
        full = Path(path) if Path(path).is_absolute() else self.workspace / path
        if not full.is_file():
            raise GradingUnavailable(f"no database at {full}")
        conn = sqlite3.connect(f"{full.resolve().as_uri()}?mode=ro", uri=True, timeout=5, check_same_thread=False)
        conn.row_factory = sqlite3.Row
        with self._lock:
            self._dbs.append(conn)
        return conn

    def submission(self) -> str | None:
        """The agent's submission file's text (stripped), or None when absent or empty."""
        if self.submission_path is None:
            return None
        try:
            text = self.submission_path.read_text(encoding="utf-8", errors="replace").strip()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None
        return text or None

    # ---- a browser ----

    async def browser(self) -> Any:
        """A fresh Playwright page on Chromium (async API); closed when the evaluation ends."""
        # Playwright only for a check that opens a browser
        from playwright.async_api import async_playwright

        pw = await async_playwright().start()
        try:
            browser = await pw.chromium.launch(**launch_options())
        except BaseException:
            await pw.stop()
            raise
        self._browsers.append((pw, browser))
        page = await browser.new_page()
        # an unmodified page's https://js.stripe.com/v3 is the emulator's stand-in when the backend is the emulator
        js_url = self.env_vars.get("STRIPE_JS_URL") or (f"{self.stripe_api_base}/v3" if self.stripe_api_base else None)
        await route_stripe_js(page.context, js_url)
        return page

    async def end_evaluation(self) -> None:
        """Close every database connection and browser a check opened (the evaluation is over)."""
        with self._lock:
            dbs, self._dbs = self._dbs, []
        for conn in dbs:
            conn.close()
        browsers, self._browsers = self._browsers, []
        for pw, browser in browsers:
            try:
                await browser.close()
            finally:
                await pw.stop()

    def close(self) -> None:
        """Close HTTP clients (browsers are closed per evaluation)."""
        with self._lock:
            clients, self._http = list(self._http.values()), {}
        for client in clients:
            client.close()


__all__ = ["GradingContext", "GradingUnavailable", "ProcessHost", "ThisMachine"]
