"""The episode's tool executor: the manifest's MCP tool servers, with calls routed by tool name.

The servers share one process (``tools.bundle``: one import of the MCP SDK instead of one per
server), started with the episode workspace and the episode's environment (Stripe variables,
ports, the reaper tag), its stderr going to ``logs/tools-<names>.log`` (``tools-shell+files.log``;
``tools-shell.log`` for a server alone) through a pipe, each line redacted as it is written (the
episode's ``Redactor``). ``STRIPEBENCH_TOOLS_SEPARATE=1`` gives each server a process of its own.
A call to an unknown tool or with bad arguments comes back as an error result the
agent sees; only a server that died raises (the driver then ends the episode).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any, BinaryIO

from mcp.shared.exceptions import MCPError

from stripebench_tui import chromium
from stripebench_tui.core.redact import Redactor
from stripebench_tui.core.tool_types import ToolOutcome, ToolSpec
from stripebench_tui.errors import RuntimeProblem
from stripebench_tui.tools import BUILTIN_SERVERS
from stripebench_tui.tools.bundle import command_args
from stripebench_tui.tools.client import ToolServerHandle

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp")
SEPARATE_VAR = "STRIPEBENCH_TOOLS_SEPARATE"  # "1": one process per tool server (as before the bundles)
LOG_DRAIN_TIMEOUT = 2.0  # seconds to wait for the last lines of a stopped server's stderr

# The SDK already starts each server in a session of its own (a terminal's Ctrl+C reaches stripebench, which
# stops the episode in order, not the servers mid-call); this adds a parent-death signal so a server dies with
# us at once (SIGTERM: it still stops what it started), not only when it notices its stdin closing.
_DIE_WITH_PARENT = (
    "import ctypes, os, signal, sys; "
    "ctypes.CDLL('libc.so.6').prctl(1, signal.SIGTERM, 0, 0, 0); "
    "os.execv(sys.executable, [sys.executable] + sys.argv[1:])"
)


class McpToolExecutor:
    """Implements ``core.executor.ToolExecutor`` over several MCP servers."""

    where = ""  # said after "did not start" when a server fails, e.g. " in the container"

    def __init__(self, servers: list[str], *, workspace: Path, episode_dir: Path, env: dict[str, str],
                 logs: Path | None = None, redactor: Redactor | None = None) -> None:
        self.server_names = list(servers)
        self.redactor = redactor or Redactor()
        self.workspace = workspace
        self.episode_dir = episode_dir
        self.env = env
        self.logs = logs or episode_dir / "logs"
        self.handles: dict[str, ToolServerHandle] = {}
        self.routes: dict[str, ToolServerHandle] = {}
        self.specs: list[ToolSpec] = []
        self._errlogs: list[Any] = []
        self._log_copiers: list[threading.Thread] = []

    async def start(self) -> None:
        """Start every server (in parallel) and learn their tools; RuntimeProblem in one line on failure."""
        if "browser" in self.server_names:
            if chromium.find_chromium() is None:
                raise RuntimeProblem("the browser tool needs Chromium, which was not found (install the chromium package)")
        unknown = [n for n in self.server_names if n not in BUILTIN_SERVERS]
        if unknown:
            raise RuntimeProblem(f"unknown tool server {unknown[0]!r}; built-in ones are {', '.join(BUILTIN_SERVERS)}")
        for group in self.process_groups():
            label = "+".join(group)
            errlog = self.open_log(label)
            command, args = self.group_command(group)
            self.handles[label] = ToolServerHandle(label, command, args, env=self.env, errlog=errlog)
        results = await asyncio.gather(*(h.start() for h in self.handles.values()), return_exceptions=True)
        for name, result in zip(self.handles, results, strict=True):
            if isinstance(result, BaseException):
                await self.close()
                raise RuntimeProblem(f"tool server {name!r} did not start{self.where}: {result}") from None
        for handle in self.handles.values():
            for spec in await handle.list_tools():
                if spec.name in self.routes:
                    continue  # the first server to offer a name keeps it
                self.routes[spec.name] = handle
                self.specs.append(spec)

    def open_log(self, name: str) -> Any:
        """The write end of a pipe whose lines reach ``logs/tools-<name>.log`` redacted (a server's stderr);
        ``close()`` closes it and waits for the last line."""
        read_fd, write_fd = os.pipe()
        log = open(self.logs / f"tools-{name}.log", "ab")
        copier = threading.Thread(target=_copy_redacted, args=(os.fdopen(read_fd, "rb"), log, self.redactor),
                                  name=f"tools-log:{name}", daemon=True)
        copier.start()
        self._log_copiers.append(copier)
        errlog = os.fdopen(write_fd, "w", encoding="utf-8")
        self._errlogs.append(errlog)  # closed by close()
        return errlog

    def process_groups(self) -> list[list[str]]:
        """The servers, grouped by the process they share: all in one (each server process pays about a second
        of CPU importing the MCP SDK), or one each with ``STRIPEBENCH_TOOLS_SEPARATE=1``."""
        if os.environ.get(SEPARATE_VAR) == "1":
            return [[name] for name in self.server_names]
        return [list(self.server_names)] if self.server_names else []

    def server_options(self, name: str) -> list[str]:
        """The options tool server ``name`` is started with."""
        extra = ["--screenshots", str(self.episode_dir / "screenshots")] if name == "browser" else []
        return ["--workspace", str(self.workspace), *extra]

    def module_args(self, group: list[str]) -> list[str]:
        """``-m …`` arguments that run the servers of ``group`` in one process (``tools.bundle`` for several)."""
        if len(group) == 1:
            return ["-m", f"stripebench_tui.tools.{group[0]}", *self.server_options(group[0])]
        return ["-m", "stripebench_tui.tools.bundle", *command_args([(n, self.server_options(n)) for n in group])]

    def group_command(self, group: list[str]) -> tuple[str, list[str]]:
        """(command, args) that start the servers of ``group`` on this machine; a sandbox may run some elsewhere."""
        return sys.executable, ["-c", _DIE_WITH_PARENT, *self.module_args(group)]

    async def tools(self) -> list[ToolSpec]:
        """Every tool of every server."""
        return list(self.specs)

    async def call(self, tool: str, arguments: dict[str, Any]) -> ToolOutcome:
        """Run one call on the server that offers ``tool``."""
        handle = self.routes.get(tool)
        if handle is None:
            known = ", ".join(sorted(self.routes))
            return ToolOutcome(text=f"unknown tool {tool!r}; available tools: {known}", is_error=True)
        if not isinstance(arguments, dict):
            return ToolOutcome(text=f"arguments of {tool} must be a JSON object, got {type(arguments).__name__}",
                               is_error=True)
        try:
            result = await handle.call(tool, arguments)
        except MCPError as exc:  # the server answered with a protocol error (bad arguments, unknown tool)
            return ToolOutcome(text=f"{tool} failed: {exc}", is_error=True)
        data = result.data or {}
        exit_code = data.get("exit_code") if isinstance(data.get("exit_code"), int) else None
        raw_duration = data.get("duration_s")
        duration = float(raw_duration) if isinstance(raw_duration, (int, float)) else None
        raw_startup = data.get("startup_s")
        startup = float(raw_startup) if isinstance(raw_startup, (int, float)) else 0.0
        return ToolOutcome(text=result.text, is_error=result.is_error, exit_code=exit_code,
                           duration=duration if tool == "shell" else None,
                           startup=max(0.0, startup), images=self._images(data))

    def _images(self, data: dict[str, Any]) -> list[str]:
        path = data.get("path")
        if not isinstance(path, str) or not path.lower().endswith(IMAGE_SUFFIXES):
            return []
        try:
            return [os.path.relpath(Path(path).resolve(), self.episode_dir.resolve())]
        except ValueError:
            return [path]

    async def close(self) -> None:
        """Stop every server (each stops the processes it started)."""
        handles, self.handles = list(self.handles.values()), {}
        await asyncio.gather(*(h.close() for h in handles), return_exceptions=True)
        for errlog in self._errlogs:
            with contextlib.suppress(Exception):
                errlog.close()
        self._errlogs = []
        copiers, self._log_copiers = self._log_copiers, []
        # Each copier ends when no process holds its pipe any more (a stray child may: it is then left behind).
        await asyncio.to_thread(_join_all, copiers, LOG_DRAIN_TIMEOUT)


def _join_all(threads: list[threading.Thread], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))


def _copy_redacted(pipe: BinaryIO, log: BinaryIO, redactor: Redactor) -> None:
    with pipe, log:
        for line in pipe:
            log.write(redactor.data(line))
            log.flush()


__all__ = ["McpToolExecutor"]
