"""tools.bundle: several built-in servers in one process, each tool still naming its own server."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from stripebench_tui.tools.bundle import command_args, split_parts
from stripebench_tui.tools.client import ToolServerHandle
from tests.tools.test_shell import alive, wait_until


def bundle_handle(workspace: Path, *names: str) -> ToolServerHandle:
    args = command_args([(name, ["--workspace", str(workspace)]) for name in names])
    return ToolServerHandle("+".join(names), sys.executable, ["-m", "stripebench_tui.tools.bundle", *args])


def test_parts_are_split_on_the_separator_and_checked() -> None:
    parts = [("shell", ["--workspace", "/w", "--timeout", "5"]), ("files", ["--workspace", "/w"])]
    assert split_parts(command_args(parts)) == parts
    with pytest.raises(SystemExit, match="unknown tool server 'git'"):
        split_parts(["shell", "--", "git"])
    with pytest.raises(SystemExit, match="named twice"):
        split_parts(["files", "--", "files"])
    with pytest.raises(SystemExit, match="at least one"):
        split_parts(["--"])


async def test_one_process_serves_every_part_with_its_own_server_name(workspace: Path) -> None:
    (workspace / "a.txt").write_text("hello\n")
    async with bundle_handle(workspace, "shell", "files", "stripe_docs") as handle:
        specs = await handle.list_tools()
        servers = {s.name: s.server for s in specs}
        assert servers["shell"] == servers["list_background"] == "shell"
        assert servers["view_file"] == servers["create_file"] == "files"
        assert servers["search_stripe_documentation"] == "stripe_docs"
        assert [s.server for s in specs] == sorted((s.server for s in specs), key=["shell", "files", "stripe_docs"].index)
        shown = await handle.call("view_file", {"path": "a.txt"})
        assert not shown.is_error and "hello" in shown.text
        ran = await handle.call("shell", {"command": "cat a.txt"})
        assert ran.data["exit_code"] == 0 and "hello" in ran.text
        missing = await handle.call("view_file", {})  # bad arguments still come back as a failed result
        assert missing.is_error


async def test_the_parts_cleanups_run_when_the_bundle_stops(workspace: Path) -> None:
    handle = bundle_handle(workspace, "files", "shell")
    await handle.start()
    try:
        started = await handle.call("shell", {"command": "sleep 60", "background": True})
        pid = started.data["pid"]
        assert alive(pid)
    finally:
        await handle.close()
    assert await wait_until(lambda: not alive(pid)), "the shell's background job outlived the bundle"
