"""Connecting to an MCP tool server over stdio: spawn, list tools, call, close.

    async with ToolServerHandle.builtin("shell", workspace="/tmp/ws") as shell:
        specs = await shell.list_tools()
        result = await shell.call("shell", {"command": "ls"})

Any MCP server works, not only ours: ``ToolServerHandle("git", "uvx", ["mcp-server-git"])``.
The connection is owned by a task of its own, so a handle may be opened and closed
from different tasks.
"""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import dataclass, field
from typing import Any, TextIO

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp_types import TextContent

from stripebench_tui.core.tool_types import ToolSpec
from stripebench_tui.errors import RuntimeProblem
from stripebench_tui.tools import BUILTIN_SERVERS, SERVER_META


@dataclass
class McpToolReply:
    """What a tool call returned: text for the model, whether it failed, and structured data."""

    text: str
    is_error: bool
    data: dict[str, Any] = field(default_factory=dict)


def _innermost(exc: BaseException) -> BaseException:
    """The one exception inside nested single-member exception groups (anyio task groups wrap)."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


class ToolServerError(RuntimeProblem):
    """The tool server stopped answering (it died, or a call outlived its timeout)."""


class ToolServerHandle:
    """A running MCP tool server and the client session talking to it."""

    def __init__(
        self,
        name: str,
        command: str,
        args: list[str] | None = None,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        errlog: TextIO | None = None,
    ) -> None:
        self.name = name
        # The SDK passes only a few "safe" variables by default; tool servers need the full
        # environment the driver built (PATH, STRIPE_API_BASE, …), so pass it explicitly.
        self.params = StdioServerParameters(
            command=command, args=list(args or []), env=dict(os.environ if env is None else env), cwd=cwd
        )
        self.errlog = errlog or sys.stderr
        self._owner: asyncio.Task[None] | None = None
        self._closing = asyncio.Event()
        self.session: ClientSession | None = None

    @classmethod
    def builtin(
        cls, name: str, workspace: str, *extra_args: str, env: dict[str, str] | None = None, errlog: TextIO | None = None
    ) -> ToolServerHandle:
        """A handle for one of our servers (shell, files, browser, stripe_docs) on ``workspace``."""
        if name not in BUILTIN_SERVERS:
            raise RuntimeProblem(f"unknown tool server {name!r}; built-in ones are {', '.join(BUILTIN_SERVERS)}")
        args = ["-m", f"stripebench_tui.tools.{name}", "--workspace", str(workspace), *extra_args]
        return cls(name, sys.executable, args, env=env, errlog=errlog)

    async def start(self) -> None:
        """Spawn the server and complete the MCP handshake."""
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()
        self._closing = asyncio.Event()
        self._owner = asyncio.create_task(self._own_connection(ready), name=f"mcp-{self.name}")
        try:
            await ready
        except BaseException:
            await self.close()
            raise

    async def _own_connection(self, ready: asyncio.Future[None]) -> None:
        # The SDK's transport lives in anyio task groups that must be entered and left by the
        # same task; owning them here lets callers open and close the handle from any task.
        try:
            async with stdio_client(self.params, errlog=self.errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    self.session = session
                    ready.set_result(None)
                    await self._closing.wait()
        except BaseException as caught:
            exc = _innermost(caught)
            if not ready.done():
                if isinstance(exc, OSError):
                    exc = RuntimeProblem(f"cannot start tool server {self.name!r}: {exc}")
                elif isinstance(exc, MCPError):  # it exited before the handshake: its stderr says why
                    exc = ToolServerError(f"tool server {self.name!r} did not start ({exc}); see its error output")
                ready.set_exception(exc)
            elif not isinstance(caught, asyncio.CancelledError):
                raise
        finally:
            self.session = None

    async def list_tools(self) -> list[ToolSpec]:
        """The server's tools, as the agent protocol describes them (each tool's own server where its metadata
        names one: several servers may share a process, ``tools.bundle``)."""
        result = await self._session().list_tools()
        return [
            ToolSpec(name=t.name, description=t.description or "", input_schema=dict(t.input_schema),
                     server=str((t.meta or {}).get(SERVER_META) or self.name))
            for t in result.tools
        ]

    async def call(self, tool: str, arguments: dict[str, Any] | None = None, timeout: float | None = None) -> McpToolReply:
        """Call one tool; a failing tool comes back as ``is_error``, not as an exception."""
        try:
            result = await self._session().call_tool(tool, arguments or {}, read_timeout_seconds=timeout)
        except MCPError as exc:
            raise ToolServerError(f"tool server {self.name!r} failed on {tool}: {exc}") from exc
        text = "\n".join(block.text for block in result.content if isinstance(block, TextContent))
        data = result.structured_content if isinstance(result.structured_content, dict) else {}
        return McpToolReply(text=text, is_error=bool(result.is_error), data=data)

    async def close(self) -> None:
        """End the session and stop the server (it stops its own children)."""
        owner, self._owner = self._owner, None
        if owner is None:
            return
        self._closing.set()
        try:
            await owner
        except Exception as exc:  # noqa: BLE001 - the server already died; nothing left to stop
            print(f"tool server {self.name!r} ended with {exc!r}", file=self.errlog)

    def _session(self) -> ClientSession:
        if self.session is None:
            raise RuntimeError(f"tool server {self.name!r} is not started")
        return self.session

    async def __aenter__(self) -> ToolServerHandle:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
