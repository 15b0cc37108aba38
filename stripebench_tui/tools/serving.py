"""What every tool server shares: its command line, result building and a fast stdio loop.

The SDK's own ``stdio_server()`` reads stdin and writes stdout through worker
threads, which costs thread hand-offs on every tool call (``benchmarks/mcp_transport.py``
on a shared two-core machine: 0.3–0.5 ms more per call than the loop below at best,
about 1.6 ms more under heavy load). Tool calls are the agent's inner loop, so we
feed the SDK's stdio transport with line streams backed by asyncio pipes instead.

Everything above the transport is still the SDK's, through its public API only:
the tools are declared on an ``MCPServer`` as usual, and a low-level SDK ``Server``
(``mcp.server.lowlevel.Server``, which takes the streams) answers ``tools/list``
and ``tools/call`` by calling that ``MCPServer``'s public ``list_tools`` and
``call_tool``. ``STRIPEBENCH_MCP_SDK_STDIO=1`` runs the ``MCPServer`` the SDK's
own way (``run_stdio_async``) instead.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolRequestParams, CallToolResult, ListToolsResult, PaginatedRequestParams, TextContent

from stripebench_tui.tools import SERVER_META

if TYPE_CHECKING:
    from anyio import AsyncFile

Cleanup = Callable[[], Awaitable[None]]
Served = tuple[MCPServer, list[Cleanup]]  # a server ready to serve and what to run when it stops


def tool_result(text: str, data: dict[str, Any] | None = None, is_error: bool = False) -> CallToolResult:
    """A tool call result: text for the model, optional structured data for the driver."""
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data, is_error=is_error)


def tool_error(text: str, data: dict[str, Any] | None = None) -> CallToolResult:
    """A failed tool call, with a message that says what to do differently."""
    return tool_result(text, data, is_error=True)


def new_server(name: str, instructions: str) -> MCPServer:
    """An MCPServer that logs only warnings (tool errors already reach the caller as results)."""
    level = os.environ.get("STRIPEBENCH_TOOL_LOG_LEVEL", "WARNING").upper()
    return MCPServer(name, instructions=instructions, log_level=level)  # type: ignore[arg-type]


def argument_parser(name: str, description: str) -> argparse.ArgumentParser:
    """An argparse parser with the options every tool server takes."""
    parser = argparse.ArgumentParser(prog=f"python -m stripebench_tui.tools.{name}", description=description)
    parser.add_argument(
        "--workspace",
        default=os.environ.get("STRIPEBENCH_WORKSPACE", "."),
        help="episode workspace directory (default: $STRIPEBENCH_WORKSPACE or the current directory)",
    )
    return parser


def workspace_dir(value: str) -> Path:
    """The workspace as an absolute, symlink-free path; exits with a one-line message if missing."""
    path = Path(value).expanduser().resolve()
    if not path.is_dir():
        sys.exit(f"workspace {value!r} is not a directory")
    return path


class _LineReader:
    """Async iterator of decoded lines over an asyncio StreamReader (what stdio_server iterates)."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def __aiter__(self) -> _LineReader:
        return self

    async def __anext__(self) -> str:
        line = await self._reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", "replace")


class _PipeWriter:
    """Writes whole messages to a non-blocking fd, waiting for room when the pipe is full."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        os.set_blocking(fd, False)

    async def write(self, text: str) -> None:
        data = memoryview(text.encode("utf-8"))
        loop = asyncio.get_running_loop()
        while data:
            try:
                written = os.write(self._fd, data)
                data = data[written:]
            except BlockingIOError:
                room = loop.create_future()
                loop.add_writer(self._fd, room.set_result, None)
                try:
                    await room
                finally:
                    loop.remove_writer(self._fd)

    async def flush(self) -> None:
        """Nothing is buffered; present because the SDK transport calls it."""


def tools_endpoint(*servers: MCPServer) -> Server:
    """A low-level SDK server offering the tools of ``servers``, through ``MCPServer``'s public methods only.

    Each tool is listed with its server's name in its metadata (``SERVER_META``), so a client of several
    servers sharing one process still knows which server a tool belongs to; where two servers offer a name,
    the first keeps it.
    """
    owners: dict[str, MCPServer] = {}

    async def listed() -> list[Any]:
        tools, seen = [], set()
        for server in servers:
            for tool in await server.list_tools():
                if tool.name in seen:
                    continue
                seen.add(tool.name)
                owners[tool.name] = server
                tools.append(tool.model_copy(update={"meta": {**(tool.meta or {}), SERVER_META: server.name}}))
        return tools

    # Any: the SDK's per-request context, which its lowlevel handlers are given untyped
    async def list_tools(_ctx: Any, _params: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(tools=await listed())

    # Any: the SDK's per-request context, as above
    async def call_tool(_ctx: Any, params: CallToolRequestParams) -> CallToolResult:
        if not owners:
            await listed()
        server = owners.get(params.name, servers[0])  # an unknown name: the first server answers as MCPServer does
        try:
            return await server.call_tool(params.name, params.arguments or {})  # type: ignore[return-value]
        except MCPError:
            raise
        except Exception as exc:  # noqa: BLE001 - as MCPServer itself answers: the caller gets the error as a failed result
            return tool_error(str(exc))

    first = servers[0]
    if len(servers) == 1:
        return Server(first.name, version=first.version, instructions=first.instructions,
                      on_list_tools=list_tools, on_call_tool=call_tool)
    instructions = " ".join(s.instructions for s in servers if s.instructions)
    return Server("+".join(s.name for s in servers), version=first.version, instructions=instructions,
                  on_list_tools=list_tools, on_call_tool=call_tool)


async def _serve_fast(endpoint: Server) -> None:
    # Keep private copies of the wire and point fds 0/1 elsewhere, so a child process
    # that reads stdin or writes stdout can never corrupt the JSON-RPC stream.
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    reader = asyncio.StreamReader(limit=64 * 1024 * 1024)
    await asyncio.get_running_loop().connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(wire_in, "rb", 0)
    )
    # the two give what the SDK's transport uses of an AsyncFile (readline/write/flush), without its threads
    async with stdio_server(cast("AsyncFile[str]", _LineReader(reader)), cast("AsyncFile[str]", _PipeWriter(wire_out))) \
            as (read_stream, write_stream):
        await endpoint.run(read_stream, write_stream, endpoint.create_initialization_options())


async def _serve_sdk(servers: list[MCPServer]) -> None:
    if len(servers) == 1:
        await servers[0].run_stdio_async()
        return
    endpoint = tools_endpoint(*servers)  # several servers: the SDK's own stdio transport under one endpoint
    async with stdio_server() as (read_stream, write_stream):
        await endpoint.run(read_stream, write_stream, endpoint.create_initialization_options())


async def serve_stdio(server: MCPServer | list[MCPServer], cleanups: list[Cleanup] | None = None) -> None:
    """Serve ``server`` (or several, as one endpoint) on stdin/stdout until stdin closes or SIGTERM/SIGINT,
    then run ``cleanups``.

    ``STRIPEBENCH_MCP_SDK_STDIO=1`` uses the SDK's own (thread-based) transport instead,
    for comparison or should the fast one ever misbehave.
    """
    servers = server if isinstance(server, list) else [server]
    loop = asyncio.get_running_loop()
    main = cast("asyncio.Task[Any]", asyncio.current_task())  # called in a task
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, main.cancel)
    try:
        if os.environ.get("STRIPEBENCH_MCP_SDK_STDIO") == "1":
            await _serve_sdk(servers)
        else:
            await _serve_fast(tools_endpoint(*servers))
    except asyncio.CancelledError:
        pass
    finally:
        for cleanup in cleanups or []:
            try:
                await asyncio.wait_for(cleanup(), timeout=10)
            except Exception as exc:  # noqa: BLE001 - a failed cleanup must not stop the others
                print(f"cleanup failed: {exc!r}", file=sys.stderr)


def run(server: MCPServer, cleanups: list[Cleanup] | None = None) -> None:
    """Run a tool server over stdio in a fresh event loop."""
    asyncio.run(serve_stdio(server, cleanups))


def run_together(parts: list[Served]) -> None:
    """Run several tool servers as one stdio endpoint in a fresh event loop (``tools.bundle``); every part's
    cleanups run when it ends."""
    asyncio.run(serve_stdio([server for server, _ in parts], [c for _, cleanups in parts for c in cleanups]))
