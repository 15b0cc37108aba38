"""The docker sandbox: the episode's workspace, services, seed script and the agent's shell in a container.

Per episode: a fresh container of the environment's image (``runtime.docker_images``)
labelled with the episode's tag, the workspace bind-mounted read-write at the same
path as on this machine (so traces, graders and the agent see one path), the root
filesystem read-only with a private /tmp, commands run as a non-root user (this user's
uid, or 1000 when stripebench runs as root, the workspace then chowned to it), every
capability dropped, no-new-privileges, and CPU, memory and process-count limits from
the manifest's ``[docker]``.

The container sees only what the episode needs: the workspace, the seed script (that
one file, read-only), stripebench's own package (read-only, for the tool servers) and
``grader-scratch/`` (where a grader's copy of the app keeps its database). The
environment's folder is never mounted: its ``solution/``, ``mutants/`` and the
graders stay on this machine. A grader's copy of the app (``start_process``) runs in
the container too, so the agent's code never runs here.

An environment that hides paths from the agent (a published folder's server code) has its
full workspace (``envs.workspace``) mounted beside the workspace, at the same path: the
services, setup and seed run there. The agent's shell starts in the workspace, which lacks
the hidden paths, but it runs in the same container as the same user as the services, so
the full workspace is out of its sight, not out of its reach: the container keeps the
folder's grader/ and solution/ away, not the hidden paths.

Network: the container shares the host's network. The app must reach the Stripe
emulator, which stays on this machine, and the browser tool (also here) must reach
the app; the engine here runs without a bridge, so ``none`` or a private network are
not possible. The trade-off: the agent's commands can reach anything this machine
can. Ports are allocated on the host and health checks probe from the host.

Every command inside runs through ``runtime.docker_exec`` (a local process relaying
to an exec), so services, the seed script and the shell/files tool servers reuse the
local machinery; the browser and docs tools run on this machine. At the end, or when
stripebench dies (a watchdog process holds a pipe), the container and its volumes are
removed; a container whose owner died without that is removed on the next start.

With an engine on another machine (``DOCKER_HOST=tcp://…``) nothing is bind-mounted: the same paths are
anonymous volumes whose files are copied in and the workspace copied back (``runtime.docker_copy``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

import stripebench_tui
from stripebench_tui.child_env import base_env
from stripebench_tui.core.bus import EventBus
from stripebench_tui.core.events import Service
from stripebench_tui.envs.manifest import Environment
from stripebench_tui.envs.plans import PlanError, expand
from stripebench_tui.errors import BadFileError, RuntimeProblem, UserError
from stripebench_tui.preload import preload_env
from stripebench_tui.runtime import docker_copy
from stripebench_tui.runtime.docker_engine import LABEL_EPISODE, LABEL_OWNER, connect, owner_label, remove_stale_containers
from stripebench_tui.runtime.docker_exec import ENV_VAR, exec_argv
from stripebench_tui.runtime.docker_images import ensure_image
from stripebench_tui.runtime.reaper import TAG_VAR, Watchdog
from stripebench_tui.runtime.sandbox import SandboxBase, lay_out
from stripebench_tui.runtime.services import ServiceFailed, ServiceProcess
from stripebench_tui.runtime.tools import _DIE_WITH_PARENT, McpToolExecutor

ROOT_AGENT_UID = 1000  # who runs the agent's commands when stripebench itself runs as root
IN_CONTAINER_SERVERS = ("shell", "files")  # the others (browser, stripe_docs) run on this machine
PACKAGE_MOUNT = "/opt/stripebench"
SEED_MOUNT = "/opt/stripebench-seed"  # the seed script alone, read-only
SCRATCH = "grader-scratch"  # in the episode directory: graders' app copies keep their files here


class DockerSandbox(SandboxBase):
    """Runs the episode in a container on the engine ``docker.from_env()`` finds (see the module docstring)."""

    name = "docker"
    where = " in the container"  # said after "exited with code N"

    def __init__(self, env: Environment, episode_dir: Path, stripe_vars: dict[str, str]) -> None:
        super().__init__(env, episode_dir, stripe_vars)
        self.container_name = f"stripebench-{env.id}-{self.tag[:12]}"
        self.container: Any = None
        self.client: Any = None
        self.image = ""
        self.watchdog: _Watchdogs | None = None
        self.read_only_mounts: list[tuple[Path, str]] = []  # more host folders, and where the container sees them
        self.copy = docker_copy.copy_mode()  # files copied in and out instead of bind-mounted (a remote engine)
        if os.getuid() == 0:
            self.uid, self.gid = ROOT_AGENT_UID, ROOT_AGENT_UID
        else:
            self.uid, self.gid = os.getuid(), os.getgid()

    # ---- the Sandbox protocol ----

    def prepare(self) -> None:
        """Copy the workspace in, allocate host ports, start the watchdog (the container comes in ``start``)."""
        made = [what for what, spec in (("[postgres]", self.env.manifest.postgres), ("[node]", self.env.manifest.node))
                if spec is not None]
        if made:
            raise UserError(f"{self.env.id} asks for {' and '.join(made)}, which only the local sandbox makes: "
                            "run it without --sandbox docker")
        lay_out(self.env, self.episode_dir, self.workspace, self._vars)
        self.scratch.mkdir(exist_ok=True)
        self.watchdog = _Watchdogs(self.tag, self.container_name)

    @property
    def scratch(self) -> Path:
        """Where graders' app copies keep their files (mounted read-write at the same path)."""
        return self.episode_dir / SCRATCH

    def seed_path(self) -> str:
        """The seed script's path inside the container ("" without one)."""
        seed = self.env.manifest.stripe.seed
        return f"{SEED_MOUNT}/{Path(seed).name}" if seed else ""

    def header_extra(self) -> dict[str, Any]:
        """What the trace header says about the container (the TUI's status bar shows it)."""
        # The header is written before the engine is reached: the name is fixed now, the id and image come later
        # in the `docker` service events.
        return {"container": self.container_name, "agent_uid": self.uid}

    def mount_read_only(self, path: Path, at: str) -> None:
        """Show ``path`` (say, the harness cache) read-only in the container at ``at``; before ``start``."""
        if self.container is not None:
            raise RuntimeError("mount_read_only after the container started")
        self.read_only_mounts.append((path.resolve(), at))

    def container_env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        """The environment of a command inside the container: only the episode's variables."""
        env = {**self._vars, TAG_VAR: self.tag, "HOME": "/tmp", "PYTHONUNBUFFERED": "1"}
        env.update(extra or {})
        if self.env.manifest.stripe_preload:  # the preloads as the container sees them (the image's PYTHONPATH kept)
            env.update(preload_env(env, root=PurePosixPath(PACKAGE_MOUNT, "stripebench_tui", "preload"),
                                   pythonpath=PACKAGE_MOUNT))
        return env

    def tool_env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        """The environment of the local relay processes: ours, the tag, and the container's env as JSON."""
        return {**self.process_env(), ENV_VAR: json.dumps(self.container_env(extra))}

    def exec_argv(self, argv: list[str], interactive: bool = False, workdir: Path | None = None) -> list[str]:
        """The local command line that runs ``argv`` in the workspace (or ``workdir``) inside the container, as the
        agent user."""
        return exec_argv(self.container_name, argv, user=f"{self.uid}:{self.gid}", workdir=str(workdir or self.workspace),
                         interactive=interactive)

    async def start(self, bus: EventBus) -> None:
        """Reach the engine, sweep stale containers, get the image (built if needed) and start the container."""
        loop = asyncio.get_running_loop()

        def say(text: str) -> None:
            loop.call_soon_threadsafe(bus.publish_nowait, Service(service="docker", status="log", text=text))

        try:
            self.client = await asyncio.to_thread(connect)
        except RuntimeProblem as exc:
            raise ServiceFailed(str(exc)) from None
        stale = await asyncio.to_thread(remove_stale_containers, self.client)
        if stale:
            say(f"removed {len(stale)} container(s) left by a killed run: {', '.join(stale)}")
        try:
            self.image, built = await asyncio.to_thread(ensure_image, self.client, self.env, say)
        except RuntimeProblem as exc:
            raise ServiceFailed(str(exc)) from None
        if self.uid != os.getuid() and not self.copy:  # (copied files get their owner in the archive)
            await asyncio.to_thread(_chown_tree, self.workspace, self.uid, self.gid)
            if self.full_workspace != self.workspace:
                await asyncio.to_thread(_chown_tree, self.full_workspace, self.uid, self.gid)
            os.chown(self.scratch, self.uid, self.gid)
        await bus.publish(Service(service="docker", status="starting", text=f"container {self.container_name} of {self.image}"))
        try:
            self.container = await asyncio.to_thread(self._run_container)
        except Exception as exc:  # noqa: BLE001 - the engine's errors: say them on one line
            raise ServiceFailed(f"the container {self.container_name} did not start: "
                                f"{str(exc).splitlines()[0][:300]}") from None
        await bus.publish(Service(service="docker", status="healthy",
                                  text=f"container {self.container.short_id} ({self.container_name}) of {self.image} "
                                       f"running as uid {self.uid}"))

    def _run_container(self) -> Any:
        spec = self.env.manifest.docker
        package = Path(stripebench_tui.__file__).resolve().parent
        # Only what the episode needs: never the environment's folder (its solution/ and mutants/) nor graders/.
        volumes = {
            str(self.workspace): {"bind": str(self.workspace), "mode": "rw"},
            str(self.scratch): {"bind": str(self.scratch), "mode": "rw"},
            str(package): {"bind": f"{PACKAGE_MOUNT}/stripebench_tui", "mode": "ro"},
        }
        if self.full_workspace != self.workspace:  # the services' view, hidden paths included (envs.workspace)
            volumes[str(self.full_workspace)] = {"bind": str(self.full_workspace), "mode": "rw"}
        for path in (self.workspace, self.full_workspace, self.scratch):
            if path.resolve() != path:
                volumes[str(path.resolve())] = {"bind": str(path.resolve()), "mode": "rw"}
        for path, at in self.read_only_mounts:
            volumes[str(path)] = {"bind": at, "mode": "ro"}
        if self.env.manifest.stripe.seed:
            volumes[str(self.env.path(self.env.manifest.stripe.seed).resolve())] = {"bind": self.seed_path(),
                                                                                     "mode": "ro"}
        options = dict(
            detach=True, name=self.container_name, init=True,
            labels={LABEL_EPISODE: self.tag, LABEL_OWNER: owner_label(), "stripebench.env": self.env.id},
            network_mode="host", user=f"{self.uid}:{self.gid}", working_dir=str(self.workspace),
            read_only=True, tmpfs={"/tmp": "rw,exec,mode=1777"},
            cap_drop=["ALL"], security_opt=["no-new-privileges"], pids_limit=spec.pids,
            nano_cpus=int(spec.cpus * 1e9), mem_limit=spec.memory, environment=self.container_env(),
        )
        if not self.copy:
            return self.client.containers.run(self.image, ["sleep", "infinity"], volumes=volumes, **options)
        # Copy mode: volumes instead of bind mounts, filled before the container starts: the episode directory (the
        # workspace and the graders' scratch in it, owned by the agent user), the package, the seed's folder and
        # each read-only folder (owned by root: the agent can read them, not change them).
        package = Path(stripebench_tui.__file__).resolve().parent
        fills: list[tuple[str, dict[str, Path], int]] = [
            (str(self.episode_dir), {self.workspace.name: self.workspace, self.full_workspace.name: self.full_workspace,
                                     SCRATCH: self.scratch}, self.uid),
            (PACKAGE_MOUNT, {"stripebench_tui": package}, 0)]
        if self.env.manifest.stripe.seed:
            seed = self.env.path(self.env.manifest.stripe.seed).resolve()
            fills.append((SEED_MOUNT, {Path(self.seed_path()).name: seed}, 0))
        fills += [(at, {".": path}, 0) for path, at in self.read_only_mounts]
        options.pop("detach")
        container = self.client.containers.create(self.image, ["sleep", "infinity"],
                                                  mounts=docker_copy.volume_mounts([at for at, _, _ in fills]), **options)
        try:
            for at, sources, uid in fills:
                docker_copy.push(container, at, sources, uid, self.gid if uid else 0)
            container.start()
        except BaseException:
            container.remove(force=True, v=True)
            raise
        container.reload()
        return container

    def pull_workspace(self) -> None:
        """Copy mode: the container's workspace copied back over this machine's (nothing to do with bind mounts)."""
        if self.copy and self.container is not None:
            docker_copy.pull(self.container, str(self.workspace), self.workspace)

    def command_argv(self, argv: list[str]) -> list[str]:
        """Setup and seed: in the full workspace (the workspace unless the environment hides paths)."""
        return self.exec_argv(argv, workdir=self.full_workspace)

    def seed_command(self, seed: str) -> list[str]:
        return ["python3", self.seed_path()]

    def code_host_problem(self) -> str:
        return self.container_problem()

    async def start_services(self, bus: EventBus) -> None:
        """Start every service inside the container, health-checked from this machine, in manifest order."""
        for spec in self.env.manifest.services:
            self.check_ports_free(spec)
            base = self.container_env()
            try:
                extra = {k: expand(v, base) for k, v in spec.env.items()}
                health = None
                if spec.health is not None:
                    ctx = {**base, **extra}
                    health = {k: expand(v, ctx) for k, v in (("http", spec.health.http), ("tcp", spec.health.tcp)) if v}
            except PlanError as exc:
                raise BadFileError(f"{self.env.root / 'environment.toml'}: services.{spec.name}: {exc}") from None
            command = shlex.join(self.exec_argv(["bash", "-c", spec.command], workdir=self.full_workspace))
            service = ServiceProcess(bus, spec.name, command, cwd=self.workspace, env=self.tool_env(extra),
                                     log_path=self.logs / f"{spec.name}.log", health=health,
                                     health_timeout=spec.health.timeout if spec.health else 30.0,
                                     restart=spec.restart, redactor=self.redactor)
            self.services.append(service)
            try:
                await service.start()
            except ServiceFailed as exc:
                raise ServiceFailed(self.container_problem() or str(exc)) from None

    def start_process(self, command: str, *, cwd: Path, env: dict[str, str], unset: tuple[str, ...] = (),
                      log: BinaryIO) -> subprocess.Popen[bytes]:
        """``bash -c command`` in the container, as the agent user (see Sandbox); the local relay leads its session."""
        inside = self.container_env(env)
        if self.copy and cwd.resolve().is_relative_to(self.scratch.resolve()) and cwd.is_dir():
            docker_copy.push(self.container, str(cwd.parent), {cwd.name: cwd}, self.uid, self.gid)  # a grader's app copy
        for name in unset:
            inside.pop(name, None)
        argv = exec_argv(self.container_name, ["bash", "-c", command], user=f"{self.uid}:{self.gid}", workdir=str(cwd))
        relay_env = {**self.process_env(), ENV_VAR: json.dumps(inside)}
        return subprocess.Popen(argv, cwd=str(self.episode_dir), env=relay_env, stdin=subprocess.DEVNULL,
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def scratch_dir(self, prefix: str) -> Path:
        """A fresh directory under ``grader-scratch/``, owned by the agent user (the container writes in it)."""
        path = Path(tempfile.mkdtemp(prefix=prefix, dir=self.scratch))
        if self.uid != os.getuid():
            os.chown(path, self.uid, self.gid)
        return path

    def tool_executor(self, servers: list[str]) -> McpToolExecutor:
        """The episode's tool executor: shell and files inside the container, the others here."""
        return _DockerToolExecutor(self, servers)

    async def stop(self) -> None:
        """Stop the services, the local relays, then remove the container and its volumes (idempotent)."""
        if self._stopped:
            return
        self._stopped = True
        for service in reversed(self.services):
            with contextlib.suppress(Exception):
                await service.stop()
        if self.copy and self.container is not None:  # the episode's results, before the container goes
            with contextlib.suppress(Exception):
                await asyncio.to_thread(self.pull_workspace)
        if self.watchdog is not None:
            await asyncio.to_thread(self.watchdog.close)

    def container_problem(self) -> str:
        """Why the container is not running (exit code, out of memory), or "" while it runs."""
        if self.container is None:
            return ""
        try:
            self.container.reload()
            state = self.container.attrs.get("State", {})
        except Exception:  # noqa: BLE001 - removed behind our back
            return f"the container {self.container_name} disappeared (removed outside stripebench?)"
        if state.get("Running"):
            return ""
        oom = ", out of memory: raise [docker] memory in environment.toml" if state.get("OOMKilled") else ""
        return f"the container {self.container_name} stopped (exit code {state.get('ExitCode')}{oom})"

    def container_gone(self) -> bool:
        """Whether the episode's container no longer exists (after ``stop``)."""
        client = self.client or connect()
        return not client.containers.list(all=True, filters={"label": f"{LABEL_EPISODE}={self.tag}"},
                                          ignore_removed=True)  # one being removed right now counts as gone


class _DockerToolExecutor(McpToolExecutor):
    """McpToolExecutor whose shell and files servers run inside the container."""

    where = " in the container"

    def __init__(self, sandbox: DockerSandbox, servers: list[str]) -> None:
        super().__init__(servers, workspace=sandbox.workspace, episode_dir=sandbox.episode_dir, env=sandbox.tool_env(),
                         redactor=sandbox.redactor)
        self.sandbox = sandbox

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        """As McpToolExecutor.call; a server lost with its container says that container stopped."""
        try:
            result = await super().call(tool, arguments)
        except Exception as exc:
            problem = await asyncio.to_thread(self.sandbox.container_problem)
            if problem:
                raise RuntimeProblem(f"{problem}; the {tool} tool cannot run") from exc
            raise
        if self.sandbox.copy:  # graders read the workspace here between turns
            await asyncio.to_thread(self.sandbox.pull_workspace)
        return result

    def process_groups(self) -> list[list[str]]:
        """As McpToolExecutor's, the servers that run in the container never sharing a process with the others."""
        groups = []
        for group in super().process_groups():
            inside = [n for n in group if n in IN_CONTAINER_SERVERS]
            groups += [part for part in (inside, [n for n in group if n not in IN_CONTAINER_SERVERS]) if part]
        return groups

    def group_command(self, group: list[str]) -> tuple[str, list[str]]:
        """(command, args) that start the servers of ``group``: in the container for shell and files."""
        module = self.module_args(group)
        if group[0] in IN_CONTAINER_SERVERS:
            argv = self.sandbox.exec_argv(["python3", *module], interactive=True)
            return argv[0], ["-c", _DIE_WITH_PARENT, *argv[1:]]
        return sys.executable, ["-c", _DIE_WITH_PARENT, *module]


class _Watchdogs:
    """The local reaper (relay processes) and a container reaper: both act when closed or when we die."""

    def __init__(self, tag: str, container: str) -> None:
        self.local = Watchdog(tag)
        self.container = subprocess.Popen(
            [sys.executable, "-m", "stripebench_tui.runtime.docker_engine", "--reap", container],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={k: v for k, v in base_env().items() if k != TAG_VAR}, start_new_session=True, close_fds=True)

    def close(self, timeout: float = 30.0) -> None:
        """Stop the relays, then remove the container; waits for both."""
        self.local.close()
        if self.container.stdin is not None and not self.container.stdin.closed:
            with contextlib.suppress(OSError):
                self.container.stdin.close()
        try:
            self.container.wait(timeout)
        except subprocess.TimeoutExpired:
            self.container.kill()
            self.container.wait()


def _chown_tree(root: Path, uid: int, gid: int) -> None:
    os.chown(root, uid, gid)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            with contextlib.suppress(OSError):
                os.chown(os.path.join(dirpath, name), uid, gid, follow_symlinks=False)


__all__ = ["DockerSandbox"]
