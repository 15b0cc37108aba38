"""The shell tool server, driven through a real MCP client over stdio."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from stripebench_tui.tools.client import ToolServerHandle
from stripebench_tui.tools.processes import direct_argv, group_has_live_members, split_trailing_ampersand


def alive(pid: int) -> bool:
    """Whether pid is a live (non-zombie) process."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


async def wait_until(predicate, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        await asyncio.sleep(0.05)
    return predicate()


async def test_exit_code_duration_and_interleaved_output(shell):
    result = await shell.call("shell", {"command": "echo out; echo err >&2; echo out2; exit 3"})
    assert not result.is_error
    assert result.data["exit_code"] == 3
    assert result.data["duration_s"] >= 0
    assert result.text.splitlines()[:3] == ["out", "err", "out2"]
    assert "[exit 3" in result.text


async def test_runs_in_the_workspace_with_the_servers_environment(workspace):
    env = dict(os.environ, STRIPE_API_BASE="http://127.0.0.1:1/v1")
    async with ToolServerHandle.builtin("shell", str(workspace), env=env) as shell:
        result = await shell.call("shell", {"command": "pwd; echo $STRIPE_API_BASE"})
        # Direct exec path (no shell syntax) also starts in the workspace.
        direct = await shell.call("shell", {"command": "pwd"})
    assert result.text.splitlines()[:2] == [str(workspace.resolve()), "http://127.0.0.1:1/v1"]
    assert direct.text.splitlines()[0] == str(workspace.resolve())


async def test_missing_program_reports_command_not_found(shell):
    result = await shell.call("shell", {"command": "no-such-program-xyz --flag"})
    assert result.data["exit_code"] == 127
    assert "not found" in result.text


async def test_output_cap_keeps_head_and_tail(shell):
    result = await shell.call("shell", {"command": "seq 1 20000"})
    lines = result.text.splitlines()
    assert lines[0] == "1"
    assert "20000" in lines
    cut = result.data["cut_bytes"]
    assert cut > 0 and f"[… {cut} bytes cut …]" in result.text
    assert result.data["output_bytes"] == len("".join(f"{n}\n" for n in range(1, 20001)))
    assert len(result.text.encode()) < 1500


async def test_timeout_kills_the_whole_process_tree(shell, workspace):
    pidfile = workspace / "child.pid"
    started = time.monotonic()
    result = await shell.call(
        "shell", {"command": f"sleep 60 & echo $! > {pidfile}; sleep 60", "timeout_s": 1}
    )
    assert time.monotonic() - started < 10
    assert result.is_error and result.data["timed_out"]
    assert "timed out after 1 s" in result.text
    child = int(pidfile.read_text())
    assert await wait_until(lambda: not alive(child)), "the backgrounded grandchild survived the timeout"


async def test_background_job_is_listed_and_stopped(shell):
    started = await shell.call("shell", {"command": "echo ready; sleep 60", "background": True})
    job, pid = started.data["background_job"], started.data["pid"]
    assert alive(pid)
    assert await wait_until(lambda: True, 0.3)
    listing = await shell.call("list_background", {})
    assert [j["id"] for j in listing.data["jobs"]] == [job]
    assert listing.data["jobs"][0]["running"] is True
    assert "ready" in listing.text
    stopped = await shell.call("stop_background", {"job_id": job})
    assert not stopped.is_error
    assert await wait_until(lambda: not alive(pid))
    assert (await shell.call("list_background", {})).data["jobs"] == []
    missing = await shell.call("stop_background", {"job_id": job})
    assert missing.is_error and f"no background job {job}" in missing.text


async def test_trailing_ampersand_runs_in_background(shell):
    started = await shell.call("shell", {"command": "sleep 60 &"})
    assert started.data["background_job"] == 1
    assert alive(started.data["pid"])
    await shell.call("stop_background", {"job_id": 1})


async def test_processes_left_running_become_a_job(shell, workspace):
    pidfile = workspace / "left.pid"
    result = await shell.call("shell", {"command": f"(sleep 60 & echo $! > {pidfile}); echo done"})
    assert result.data["exit_code"] == 0 and "done" in result.text
    job = result.data["background_job"]
    assert job is not None
    listing = await shell.call("list_background", {})
    assert listing.data["jobs"][0]["running"] is True
    await shell.call("stop_background", {"job_id": job})
    assert await wait_until(lambda: not alive(int(pidfile.read_text())))


async def test_every_process_is_stopped_when_the_server_exits(workspace):
    async with ToolServerHandle.builtin("shell", str(workspace)) as shell:
        first = await shell.call("shell", {"command": "sleep 60", "background": True})
        second = await shell.call("shell", {"command": "trap '' TERM; sleep 60 & wait", "background": True})
        pids = [first.data["pid"], second.data["pid"]]
        assert all(alive(p) for p in pids)
    assert await wait_until(lambda: not any(alive(p) for p in pids))
    assert await wait_until(lambda: not any(group_has_live_members(p) for p in pids))


def test_plain_commands_skip_bash_and_shell_syntax_does_not():
    assert direct_argv("true") == ["true"]
    assert direct_argv("python -m pytest -k x --maxfail=1") == ["python", "-m", "pytest", "-k", "x", "--maxfail=1"]
    for needs_bash in ("echo $HOME", "ls | wc", "a && b", "cd /tmp", "FOO=1 env", "echo 'a b'", "ls *.py", "ls ~"):
        assert direct_argv(needs_bash) is None, needs_bash
    assert split_trailing_ampersand("server --port 1 &") == ("server --port 1", True)
    assert split_trailing_ampersand("a && b") == ("a && b", False)


async def test_empty_command_is_an_error(shell):
    result = await shell.call("shell", {"command": "   "})
    assert result.is_error and "empty command" in result.text


async def test_a_command_still_running_is_stopped_when_the_client_goes_away(workspace):
    pidfile = workspace / "fg.pid"
    async with ToolServerHandle.builtin("shell", str(workspace)) as shell:
        call = asyncio.create_task(shell.call("shell", {"command": f"echo $$ > {pidfile}; exec sleep 60"}))
        assert await wait_until(lambda: pidfile.exists() and pidfile.read_text().strip() != "")
        pid = int(pidfile.read_text())
        assert alive(pid)
    call.cancel()
    assert await wait_until(lambda: not alive(pid))


async def test_scripts_without_exec_bit_or_shebang_behave_as_in_bash(shell, workspace):
    (workspace / "noexec.sh").write_text("echo hi\n")
    (workspace / "noshebang").write_text("echo from script\n")
    (workspace / "noshebang").chmod(0o755)
    denied = await shell.call("shell", {"command": "./noexec.sh"})
    assert denied.data["exit_code"] == 126 and "Permission denied" in denied.text
    ran = await shell.call("shell", {"command": "./noshebang"})
    assert ran.data["exit_code"] == 0 and "from script" in ran.text
    huge = await shell.call("shell", {"command": "echo " + "x" * 3_000_000})
    assert huge.is_error and "could not start the command" in huge.text
