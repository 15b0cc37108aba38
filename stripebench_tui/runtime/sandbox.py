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
import subprocess
import uuid
from collections import deque
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO, Protocol, runtime_checkable

from stripebench_tui.child_env import base_env
from stripebench_tui.core.bus import EventBus
from stripebench_tui.core.redact import Redactor
from stripebench_tui.core.trace import EPISODE_TRACE
from stripebench_tui.envs.deps import EnvDeps, with_bin_first, with_python_last
from stripebench_tui.envs.manifest import Environment, ServiceSpec
from stripebench_tui.envs.workspace import copy_workspace, full_workspace
from stripebench_tui.errors import UserError
from stripebench_tui.preload import preload_env
from stripebench_tui.runtime import node_packages, postgres
from stripebench_tui.runtime.reaper import TAG_VAR
from stripebench_tui.runtime.services import ServiceFailed, ServiceProcess, free_port, port_is_free, run_logged, with_tail

TRACE_NAME = EPISODE_TRACE


@runtime_checkable
class Sandbox(Protocol):
    """What the episode needs from wherever it runs."""

    name: str  # "local", "docker", … (the trace header's ``sandbox``)
    episode_dir: Path
    workspace: Path
    full_workspace: Path  # the workspace, or where the services see it with its hidden paths (envs.workspace)
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


SEED_TIMEOUT = 120.0
SETUP_TIMEOUT = 600.0  # setup may install packages


class SandboxBase:
    """What every sandbox keeps: the episode's directories, its tag and variables, and the processes it started;
    and what every sandbox does the same way wherever the episode's code runs: the manifest's setup commands, its
    seed script, the check that a service's ports are free."""

    name = ""
    where = ""  # where the episode's code runs, as messages say it after "exited with code N" ("" here)

    def __init__(self, env: Environment, episode_dir: Path, stripe_vars: dict[str, str]) -> None:
        self.env = env
        self.episode_dir = episode_dir
        self.workspace = episode_dir / "workspace"
        # Where the services, setup and seed run: the workspace, or the full one beside it when the environment hides
        # paths from the agent (envs.workspace).
        self.full_workspace = full_workspace(env, self.workspace)
        self.logs = episode_dir / "logs"
        self.screenshots = episode_dir / "screenshots"
        self.tag = uuid.uuid4().hex
        self.services: list[ServiceProcess] = []
        self._vars = dict(stripe_vars)
        self._stopped = False
        self.deps: EnvDeps | None = None  # a venv on this machine first on every process's PATH (local sandbox)
        self.ruby_env: dict[str, str] = {}  # the app's gems (GEM_HOME…), once installed (local sandbox)

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
        if self.env.manifest.node is not None:  # `pnpm` for everyone, on the store the install used
            node = self.env.manifest.node
            env.update(node_packages.process_env(env, node.public_hoist_pattern, node.min_node))
        if self.ruby_env:  # the app's gems for every process; its bin/ (rackup, puma, rspec…) first on PATH
            env.update(self.ruby_env, PATH=with_bin_first(Path(self.ruby_env["PATH"]), env.get("PATH")))
        return env

    async def install_dependencies(self, bus: EventBus) -> None:
        """Nothing to do unless a sandbox overrides it (the docker sandbox's image already holds them)."""

    def tool_env(self) -> dict[str, str]:
        """The variables of the episode's processes (each sandbox says how)."""
        raise NotImplementedError

    def command_argv(self, argv: list[str]) -> list[str]:
        """``argv`` as it runs where the episode's code runs (on this machine: as it is)."""
        return argv

    def seed_command(self, seed: str) -> list[str]:
        """The command that runs the manifest's seed script (before ``command_argv``)."""
        raise NotImplementedError

    def code_host_problem(self) -> str:
        """Why the place the episode's code runs is gone (a container that stopped), or "" while it is there."""
        return ""

    async def run_setup(self, bus: EventBus) -> None:
        """Run the manifest's ``setup`` commands with bash in the (full) workspace, in order; the first failure ends
        setup."""
        for n, command in enumerate(self.env.manifest.setup, 1):
            tail: deque[str] = deque(maxlen=20)
            code = await run_logged(bus, "setup", self.command_argv(["bash", "-c", command]), cwd=self.full_workspace,
                                    env=self.tool_env(), log_path=self.logs / "setup.log", timeout=SETUP_TIMEOUT,
                                    tail=tail, redactor=self.redactor)
            if code != 0:
                raise ServiceFailed(self.code_host_problem() or with_tail(
                    f"setup command {n} ({command}) exited with code {code} (see {self.logs / 'setup.log'})", tail))

    async def run_seed(self, bus: EventBus) -> None:
        """Run the manifest's ``stripe.seed`` script in the workspace."""
        seed = self.env.manifest.stripe.seed
        if not seed:
            return
        tail: deque[str] = deque(maxlen=20)
        code = await run_logged(bus, "seed", self.command_argv(self.seed_command(seed)), cwd=self.full_workspace,
                                env=self.tool_env(), log_path=self.logs / "seed.log", timeout=SEED_TIMEOUT, tail=tail,
                                redactor=self.redactor)
        if code != 0:
            raise ServiceFailed(self.code_host_problem() or with_tail(
                f"the seed script {seed} exited with code {code}{self.where} (see {self.logs / 'seed.log'})", tail))

    def check_ports_free(self, spec: ServiceSpec) -> None:
        """ServiceFailed when one of the service's ports is taken already (by something not of this episode)."""
        for var in spec.ports:
            if not port_is_free(int(self._vars[var])):
                raise ServiceFailed(f"port {self._vars[var]} ({var}) of service {spec.name} is already in use")


def lay_out(env: Environment, episode_dir: Path, workspace: Path, variables: dict[str, str]) -> None:
    """Copy the workspace in (with its shared files), make logs/ and screenshots/, and fill ``variables``.

    Each service port variable gets a free port (and ``X_URL`` for ``X_PORT``), plus the paths every process sees.
    """
    copy_workspace(env, workspace)  # its own files and the shared ones it names (e.g. devserver.py), the full one
    (episode_dir / "logs").mkdir(exist_ok=True)
    (episode_dir / "screenshots").mkdir(exist_ok=True)
    for spec in episode_services(env):
        for var in spec.ports:
            if var not in variables:
                port = free_port()
                variables[var] = str(port)
                if var.endswith("_PORT"):
                    variables.setdefault(var[: -len("_PORT")] + "_URL", f"http://127.0.0.1:{port}")
    if env.manifest.postgres is not None:
        variables[postgres.URL_VAR] = postgres.url_for(env.manifest.postgres, variables[postgres.PORT_VAR])
        variables[postgres.PASSWORD_VAR] = env.manifest.postgres.password
    variables.update(WORKSPACE=str(workspace), EPISODE_DIR=str(episode_dir),
                     SCREENSHOTS_DIR=str(episode_dir / "screenshots"))


def episode_services(env: Environment) -> list[ServiceSpec]:
    """The services an episode starts, in order: the environment's own PostgreSQL first when it asks for one."""
    made = [postgres.service_spec(env.manifest.postgres)] if env.manifest.postgres is not None else []
    return made + list(env.manifest.services)


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
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    for n in range(1, 1000):
        candidate = base / (f"{env_id}-{stamp}" + (f"-{n}" if n > 1 else ""))
        try:
            candidate.mkdir()
            return candidate
        except FileExistsError:
            continue
    raise UserError(f"cannot find a free episode directory name under {base}")


__all__ = ["Sandbox", "SandboxBase", "TRACE_NAME", "episode_services", "lay_out", "new_episode_dir"]
