"""Where an episode runs: the Sandbox protocol and the episode directory every sandbox fills.

A sandbox prepares the episode's workspace, makes the environment's dependencies
available (locally: its cached venv, ``runtime.envdeps``; in docker: the image), runs
the environment's Stripe seed script, starts its services and stops everything at the
end; graders start their copies of the app through it too (``start_process``), so the
agent's code runs only where the episode runs. ``local`` (``runtime.local``) runs
everything on this machine as this user and confines nothing; ``docker``
(``runtime.docker_sandbox``) runs it in a container that sees only what the episode needs.
"""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import BinaryIO, Iterable, Protocol, runtime_checkable

from stripebench_tui.child_env import base_env
from stripebench_tui.core.bus import EventBus
from stripebench_tui.core.redact import Redactor
from stripebench_tui.core.trace import EPISODE_TRACE
from stripebench_tui.envs.deps import EnvDeps, with_bin_first, with_python_last
from stripebench_tui.envs.manifest import Environment
from stripebench_tui.errors import UserError
from stripebench_tui.preload import preload_env
from stripebench_tui.runtime.reaper import TAG_VAR
from stripebench_tui.runtime.services import ServiceProcess, free_port

TRACE_NAME = EPISODE_TRACE


@runtime_checkable
class Sandbox(Protocol):
    """What the episode needs from wherever it runs."""

    name: str  # "local", "docker", … (the trace header's ``sandbox``)
    episode_dir: Path
    workspace: Path
    tag: str  # marks every process of the episode (see runtime.reaper)

    def prepare(self) -> None:
        """Copy the workspace in, allocate ports, arm the cleanup of leftover processes."""

    def variables(self) -> dict[str, str]:
        """Variables the app, the seed script and the agent's tools see (ports, URLs, Stripe settings)."""

    def tool_env(self) -> dict[str, str]:
        """The full process environment for tool servers (allow-listed: see ``stripebench_tui.child_env``)."""

    async def install_dependencies(self, bus: EventBus) -> None:
        """Make what the environment's app needs available (built once and cached); ServiceFailed or UserError."""

    async def run_setup(self, bus: EventBus) -> None:
        """Run the manifest's setup commands in the workspace; ServiceFailed on the first that fails."""

    async def run_seed(self, bus: EventBus) -> None:
        """Run the environment's Stripe seed script; ServiceFailed if it fails."""

    async def start_services(self, bus: EventBus) -> None:
        """Start every service and wait for its health check; ServiceFailed on the first that fails."""

    async def stop(self) -> None:
        """Stop every process the sandbox started (idempotent)."""

    def start_process(self, command: str, *, cwd: Path, env: dict[str, str], unset: tuple[str, ...] = (),
                      log: BinaryIO) -> subprocess.Popen[bytes]:
        """Start ``bash -c command`` where the episode's code runs (a grader's copy of the app), output to ``log``.

        Its environment is the episode's process environment updated with ``env``, minus the names in ``unset``.
        The returned process leads a session of its own: signalling its process group stops the command
        (wherever it runs). Graders reach this through ``GradingContext.processes``.
        """

    def scratch_dir(self, prefix: str) -> Path:
        """A fresh directory here that ``start_process`` commands can read and write at the same path."""


class SandboxBase:
    """What every sandbox keeps: the episode's directories, its tag and variables, and the processes it started."""

    name = ""

    def __init__(self, env: Environment, episode_dir: Path, stripe_vars: dict[str, str]) -> None:
        self.env = env
        self.episode_dir = episode_dir
        self.workspace = episode_dir / "workspace"
        self.logs = episode_dir / "logs"
        self.screenshots = episode_dir / "screenshots"
        self.tag = uuid.uuid4().hex
        self.services: list[ServiceProcess] = []
        self._vars = dict(stripe_vars)
        self._stopped = False
        self.deps: EnvDeps | None = None  # a venv on this machine first on every process's PATH (local sandbox)

        self.redactor = Redactor()  # what the logs of services, setup and seed are redacted with

    def add_secrets(self, secrets: Iterable[str]) -> None:
        """Register values the episode's logs must never contain (keys, the emulator's control token)."""
        for secret in secrets:
            self.redactor.add_secret(secret)

    def variables(self) -> dict[str, str]:
        """Ports, URLs, Stripe settings and paths (the oracle plan's ``${NAME}`` context)."""
        return dict(self._vars)

    def process_env(self) -> dict[str, str]:
        """The environment of every process started on this machine: the allowed part of ours (see
        ``stripebench_tui.child_env``: never a model provider's key, nor the user's own Stripe settings), the
        episode's variables and the tag."""
        env = base_env()
        env.update(self._vars)
        env.update({TAG_VAR: self.tag, "PYTHONUNBUFFERED": "1"})
        if self.deps is not None:
            env["PATH"] = with_bin_first(self.deps.bin_dir, env.get("PATH"))
        env["PATH"] = with_python_last(env.get("PATH"))  # `python app.py` where the machine has only python3
        if self.env.manifest.stripe_preload:  # the app's SDK finds the emulator without reading a base URL
            env.update(preload_env(env))
        return env

    async def install_dependencies(self, bus: EventBus) -> None:
        """Nothing to do unless a sandbox overrides it (the docker sandbox's image already holds them)."""


def lay_out(env: Environment, episode_dir: Path, workspace: Path, variables: dict[str, str]) -> None:
    """Copy the environment's workspace in, make logs/ and screenshots/, and fill ``variables``.

    Each service port variable gets a free port (and ``X_URL`` for ``X_PORT``), plus the paths every process sees.
    """
    if env.workspace.is_dir():
        shutil.copytree(env.workspace, workspace, symlinks=True)
    else:
        workspace.mkdir()
    (episode_dir / "logs").mkdir(exist_ok=True)
    (episode_dir / "screenshots").mkdir(exist_ok=True)
    for spec in env.manifest.services:
        for var in spec.ports:
            if var not in variables:
                port = free_port()
                variables[var] = str(port)
                if var.endswith("_PORT"):
                    variables.setdefault(var[: -len("_PORT")] + "_URL", f"http://127.0.0.1:{port}")
    variables.update(WORKSPACE=str(workspace), EPISODE_DIR=str(episode_dir),
                     SCREENSHOTS_DIR=str(episode_dir / "screenshots"))


def new_episode_dir(env_id: str, requested: Path | None = None, root: Path | None = None) -> Path:
    """Create a fresh episode directory: ``requested`` (must be new or empty) or ./episodes/<env>-<UTC time>/."""
    if requested is not None:
        requested = requested.expanduser().resolve()
        if requested.exists() and (not requested.is_dir() or any(requested.iterdir())):
            raise UserError(f"episode directory {requested} already exists and is not empty; not overwriting it")
        requested.mkdir(parents=True, exist_ok=True)
        return requested
    base = (root or Path.cwd() / "episodes").resolve()
    base.mkdir(parents=True, exist_ok=True)
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    for n in range(1, 1000):
        candidate = base / (f"{env_id}-{stamp}" + (f"-{n}" if n > 1 else ""))
        try:
            candidate.mkdir()
            return candidate
        except FileExistsError:
            continue
    raise UserError(f"cannot find a free episode directory name under {base}")


__all__ = ["Sandbox", "SandboxBase", "TRACE_NAME", "lay_out", "new_episode_dir"]
