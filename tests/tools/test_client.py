"""ToolServerHandle: spawning any MCP server, listing tools as ToolSpecs, calling, closing."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

from stripebench_tui.core.tool_types import ToolSpec
from stripebench_tui.errors import RuntimeProblem
from stripebench_tui.tools.client import ToolServerError, ToolServerHandle

# A third-party-style server written straight against the SDK, to show any MCP server can be added.
OTHER_SERVER = '''
from mcp.server.mcpserver import MCPServer
server = MCPServer("other")

@server.tool()
async def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b

@server.tool()
async def explode() -> str:
    """Always fails."""
    raise ValueError("boom")

@server.tool()
async def pid() -> int:
    """This server's process id."""
    import os
    return os.getpid()

server.run()
'''


async def test_any_stdio_server_can_be_driven(tmp_path: Path):
    script = tmp_path / "other.py"
    script.write_text(OTHER_SERVER)
    async with ToolServerHandle("other", sys.executable, [str(script)]) as handle:
        specs = await handle.list_tools()
        assert [s.name for s in specs] == ["add", "explode", "pid"]
        assert all(isinstance(s, ToolSpec) and s.server == "other" for s in specs)
        assert specs[0].description == "Add two numbers."
        assert specs[0].input_schema["required"] == ["a", "b"]
        result = await handle.call("add", {"a": 2, "b": 40})
        assert (result.text, result.is_error) == ("42", False)
        failed = await handle.call("explode")
        assert failed.is_error and "explode" in failed.text  # the SDK hides crash details
        bad_args = await handle.call("add", {"a": "x"})
        assert bad_args.is_error


async def test_structured_data_comes_back(workspace):
    async with ToolServerHandle.builtin("shell", str(workspace)) as handle:
        result = await handle.call("shell", {"command": "exit 4"})
    assert result.data["exit_code"] == 4


async def test_open_and_close_from_different_tasks(workspace):
    handle = ToolServerHandle.builtin("files", str(workspace))
    await asyncio.create_task(handle.start())
    assert (await handle.call("create_file", {"path": "a.txt", "content": "hi"})).data["lines"] == 1
    await asyncio.create_task(handle.close())
    with pytest.raises(RuntimeError, match="not started"):
        await handle.call("view_file", {"path": "a.txt"})


async def test_unknown_server_and_missing_command_are_clear_errors(tmp_path: Path):
    with pytest.raises(RuntimeProblem, match="unknown tool server 'nope'"):
        ToolServerHandle.builtin("nope", str(tmp_path))
    with pytest.raises(RuntimeProblem, match="cannot start tool server 'ghost'"):
        await ToolServerHandle("ghost", str(tmp_path / "no-such-binary")).start()


async def test_missing_workspace_stops_the_server_with_a_message(tmp_path: Path):
    log = tmp_path / "stderr.txt"
    with log.open("w") as errlog:
        with pytest.raises(ToolServerError, match="tool server 'shell' did not start"):
            await ToolServerHandle.builtin("shell", str(tmp_path / "missing"), errlog=errlog).start()
    assert "is not a directory" in log.read_text()


async def test_a_dead_server_is_a_tool_server_error(tmp_path: Path):
    script = tmp_path / "other.py"
    script.write_text(OTHER_SERVER)
    async with ToolServerHandle("other", sys.executable, [str(script)]) as handle:
        unknown = await handle.call("no_such_tool")
        assert unknown.is_error and "Unknown tool" in unknown.text
        await handle.call("add", {"a": 1, "b": 1})
        # Ask the server itself: under xdist this process may have other python children.
        pid = int((await handle.call("pid")).text)
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(ToolServerError, match="tool server 'other' failed on add"):
            await handle.call("add", {"a": 1, "b": 2}, timeout=10)


# The same tools served by our stdio loop (tools.serving.run) and, with STRIPEBENCH_MCP_SDK_STDIO=1, by the SDK's own.
SERVED = '''
from stripebench_tui.tools.serving import new_server, run, tool_result
server = new_server("served", "Test tools.")

@server.tool()
async def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b

@server.tool()
async def structured(n: int):
    """A result with data."""
    return tool_result(f"n is {n}", {"n": n})

@server.tool()
async def explode() -> str:
    """Always fails."""
    raise ValueError("boom")

run(server)
'''


async def _answers(script: Path, sdk: bool) -> list:
    env = {**os.environ, "STRIPEBENCH_MCP_SDK_STDIO": "1" if sdk else "0"}
    async with ToolServerHandle("served", sys.executable, [str(script)], env=env) as handle:
        specs = await handle.list_tools()
        calls = [await handle.call(name, args) for name, args in
                 (("add", {"a": 2, "b": 40}), ("structured", {"n": 3}), ("explode", {}), ("add", {"a": "x"}),
                  ("no_such_tool", {}))]
    return [[(s.name, s.description, s.input_schema) for s in specs],
            [(c.text, c.is_error, c.data) for c in calls]]


async def test_our_stdio_loop_answers_exactly_as_the_sdks_own(tmp_path: Path):
    script = tmp_path / "served.py"
    script.write_text(SERVED)
    ours, sdk = await _answers(script, sdk=False), await _answers(script, sdk=True)
    assert ours == sdk
    specs, calls = ours
    assert [name for name, _, _ in specs] == ["add", "structured", "explode"]
    assert calls[0][:2] == ("42", False) and calls[1] == ("n is 3", False, {"n": 3})
    assert calls[2][1] and calls[3][1] and calls[4][1] and "Unknown tool" in calls[4][0]
