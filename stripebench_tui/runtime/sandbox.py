"""Where an episode runs: the Sandbox protocol and the episode directory every sandbox fills.

A sandbox prepares the episode's workspace, runs the environment's Stripe seed
script, starts its services and stops everything at the end. ``local`` (this
machine, ``runtime.local``) is the one that exists; a docker sandbox is a new
module implementing the same protocol.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Protocol, runtime_checkable

from stripebench_tui.core.bus import EventBus
from stripebench_tui.core.trace import EPISODE_TRACE
from stripebench_tui.errors import UserError

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
        """The full process environment for tool servers."""

    async def run_setup(self, bus: EventBus) -> None:
        """Run the manifest's setup commands in the workspace; ServiceFailed on the first that fails."""

    async def run_seed(self, bus: EventBus) -> None:
        """Run the environment's Stripe seed script; ServiceFailed if it fails."""

    async def start_services(self, bus: EventBus) -> None:
        """Start every service and wait for its health check; ServiceFailed on the first that fails."""

    async def stop(self) -> None:
        """Stop every process the sandbox started (idempotent)."""


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


__all__ = ["Sandbox", "TRACE_NAME", "new_episode_dir"]
