"""The local sandbox: the episode runs on this machine, in a fresh episode directory.

Layout: ``workspace/`` (the environment's workspace copied in), ``trace.jsonl``,
``screenshots/``, ``logs/`` (one file per service and the seed script). Every
``ports`` entry of every service gets a free port; ``X_PORT`` also defines
``X_URL`` (``http://127.0.0.1:PORT``), so ``APP_PORT`` gives ``APP_URL``.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import BinaryIO

from stripebench_tui.core.bus import EventBus
from stripebench_tui.core.events import Service
from stripebench_tui.envs.deps import dependencies
from stripebench_tui.envs.manifest import Environment
from stripebench_tui.envs.plans import PlanError, expand
from stripebench_tui.errors import BadFileError, UserError
from stripebench_tui.runtime import episode_scratch
from stripebench_tui.runtime.envdeps import ensure_venv
from stripebench_tui.runtime.episode_scratch import EpisodeScratch
from stripebench_tui.runtime.packages_step import install_node_packages
from stripebench_tui.runtime.reaper import Watchdog, tagged_pids
from stripebench_tui.runtime.ruby_step import install_app_gems, planned_env
from stripebench_tui.runtime.sandbox import SandboxBase, episode_services, lay_out
from stripebench_tui.runtime.services import ServiceProcess


class LocalSandbox(SandboxBase):
    """Runs the environment's seed script and services as local processes (see the module docstring)."""

    name = "local"

    def __init__(self, env: Environment, episode_dir: Path, stripe_vars: dict[str, str]) -> None:
        super().__init__(env, episode_dir, stripe_vars)
        self.watchdog: Watchdog | None = None
        self.scratch: EpisodeScratch | None = None
        self.deps = dependencies(env)

    def prepare(self) -> None:
        """Copy the workspace in, make the directories, allocate ports and start the watchdog; remove what killed
        episodes left in the temporary directory."""
        lay_out(self.env, self.episode_dir, self.workspace, self._vars)
        if self.env.manifest.ruby is not None:  # the tool servers start before the gems are installed
            self.ruby_env = planned_env(self.full_workspace, self.env.manifest.ruby)
        episode_scratch.sweep_orphans()
        self.scratch = episode_scratch.make(self.tag)
        # What the watchdog removes once nothing of the episode runs, also after kill -9: the scratch directory
        # (browser profiles, a cluster PostgreSQL's user keeps there) and the cluster service_spec puts in
        # $EPISODE_DIR/postgres (its server removes it when stopped, but not when killed).
        leftovers = [self.scratch.path]
        if self.env.manifest.postgres is not None:
            leftovers.append(self.episode_dir / "postgres")
        self.watchdog = Watchdog(self.tag, leftovers, hold=self.scratch.lock_fd)

    def tool_env(self) -> dict[str, str]:
        """The environment of every process the episode starts (see SandboxBase.process_env), with the episode's
        scratch directory as their temporary directory."""
        env = self.process_env()
        if self.scratch is not None:
            env.update(self.scratch.env())
        return env

    async def install_dependencies(self, bus: EventBus) -> None:
        """Build (or reuse) the environment's cached venv, its progress as ``deps`` service events; then its npm
        packages (``packages`` events) and its gems (``gems`` events)."""
        await self._install_venv(bus)
        if self.env.manifest.node is not None:
            node = self.env.manifest.node
            await install_node_packages(bus, self.full_workspace / node.dir, self.logs / "packages.log", self.redactor,
                                        hoist=node.public_hoist_pattern, min_node=node.min_node)
        if self.env.manifest.ruby is not None:
            self.ruby_env = await install_app_gems(bus, self.full_workspace, self.env.manifest.ruby, self.logs / "gems.log",
                                                   self.redactor)

    async def _install_venv(self, bus: EventBus) -> None:
        if self.deps is None:
            return
        if self.deps.ready():
            await bus.publish(Service(service="deps", status="healthy", text=f"venv {self.deps.link.resolve()}"))
            return
        def progress(text: str) -> None:
            bus.publish_nowait(Service(service="deps", status="log", text=text))

        await bus.publish(Service(service="deps", status="starting", text=f"pip install -r {self.deps.requirements}"))
        try:
            path = await ensure_venv(self.deps, progress, log_copy=self.logs / "deps.log")
        except UserError as exc:
            await bus.publish(Service(service="deps", status="unhealthy", text=str(exc)))
            raise
        await bus.publish(Service(service="deps", status="healthy", text=f"venv {path}"))

    def seed_command(self, seed: str) -> list[str]:
        """The seed script run by the environment's Python (its venv's when it has one)."""
        python = str(self.deps.python) if self.deps is not None else sys.executable
        return [python, str(self.env.path(seed))]

    async def start_services(self, bus: EventBus) -> None:
        """Start every service in manifest order, each healthy before the next starts."""
        for spec in episode_services(self.env):
            self.check_ports_free(spec)
            env = self.tool_env()
            try:
                env.update({k: expand(v, env) for k, v in spec.env.items()})
                health = None
                if spec.health is not None:
                    health = {k: expand(v, env) for k, v in (("http", spec.health.http), ("tcp", spec.health.tcp)) if v}
            except PlanError as exc:
                raise BadFileError(f"{self.env.root / 'environment.toml'}: services.{spec.name}: {exc}") from None
            service = ServiceProcess(bus, spec.name, spec.command, cwd=self.full_workspace, env=env,
                                     log_path=self.logs / f"{_safe(spec.name)}.log", health=health,
                                     health_timeout=spec.health.timeout if spec.health else 30.0,
                                     restart=spec.restart, redactor=self.redactor,
                                     fail_on_5xx=spec.health.fail_on_5xx if spec.health else False)
            self.services.append(service)
            await service.start()

    async def stop(self) -> None:
        """Stop services (newest first), then let the watchdog sweep anything left with the episode's tag."""
        if self._stopped:
            return
        self._stopped = True
        for service in reversed(self.services):
            try:
                await service.stop()
            except Exception:  # noqa: BLE001 - keep stopping the others
                pass
        if self.watchdog is not None:
            await asyncio.to_thread(self.watchdog.close)
        if self.scratch is not None:
            self.scratch.release()

    def start_process(self, command: str, *, cwd: Path, env: dict[str, str], unset: tuple[str, ...] = (),
                      log: BinaryIO) -> subprocess.Popen[bytes]:
        """``bash -c command`` on this machine, tagged like every process of the episode (see Sandbox)."""
        full = {**self.tool_env(), **env}
        for name in unset:
            full.pop(name, None)
        return subprocess.Popen(["bash", "-c", command], cwd=str(cwd), env=full, stdin=subprocess.DEVNULL,
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def scratch_dir(self, prefix: str) -> Path:
        """A fresh temporary directory on this machine."""
        return Path(tempfile.mkdtemp(prefix=prefix))

    def leftovers(self) -> list[int]:
        """Pids still carrying this episode's tag (empty after a clean stop)."""
        return tagged_pids(self.tag)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


__all__ = ["LocalSandbox"]
