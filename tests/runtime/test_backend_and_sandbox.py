"""Stripe backend selection, the episode directory and the tool executor's error handling."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from stripebench_tui.errors import UserError
from stripebench_tui.runtime.sandbox import new_episode_dir
from stripebench_tui.runtime.tools import McpToolExecutor
from stripebench_tui.stripe_account.backend import REAL, start_backend


def test_live_keys_are_refused_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("sk_live_abc123", "rk_live_abc123"):
        with pytest.raises(UserError, match="refusing a live Stripe key"):
            start_backend(REAL, stripe_key=key)
    with pytest.raises(UserError, match="STRIPE_SECRET_KEY"):
        start_backend(REAL)
    monkeypatch.setenv("STRIPE_SECRET_KEY", "sk_test_abc123")
    real = start_backend(REAL, api_version="2025-09-30.clover")
    env = real.env_vars()
    assert env["STRIPE_API_BASE"] == "" and env["STRIPE_JS_URL"] == "https://js.stripe.com/v3"
    assert env["STRIPE_API_VERSION"] == "2025-09-30.clover" and "sk_test_abc123" in real.secrets


def test_emulator_backend_variables() -> None:
    emu = start_backend(seed=3)
    try:
        env = emu.env_vars()
        assert env["STRIPE_API_BASE"].startswith("http://127.0.0.1:")
        assert env["STRIPE_JS_URL"] == env["STRIPE_API_BASE"] + "/v3"
        assert env["STRIPE_SECRET_KEY"].startswith("sk_test_") and env["STRIPE_PUBLISHABLE_KEY"].startswith("pk_test_")
        assert "STRIPE_API_VERSION" not in env
        # The emulator's control token stays with the runtime: registered for redaction, never in the variables.
        assert emu.server.control_token in emu.secrets
        assert not any(emu.server.control_token in value for value in env.values())
    finally:
        emu.close()


def test_episode_dirs_are_never_reused(tmp_path: Path) -> None:
    a = new_episode_dir("tiny-shop", root=tmp_path)
    b = new_episode_dir("tiny-shop", root=tmp_path)
    assert a != b and a.name.startswith("tiny-shop-") and b.is_dir()
    (a / "x").write_text("x")
    with pytest.raises(UserError, match="not empty"):
        new_episode_dir("tiny-shop", requested=a)
    assert new_episode_dir("tiny-shop", requested=tmp_path / "new") == (tmp_path / "new").resolve()


async def test_tool_executor_turns_bad_calls_into_error_results(tmp_path: Path) -> None:
    ws = tmp_path / "workspace"
    ws.mkdir()
    (tmp_path / "logs").mkdir()
    (ws / "a.txt").write_text("hello\n")
    executor = McpToolExecutor(["shell", "files"], workspace=ws, episode_dir=tmp_path, env=None)
    await executor.start()
    try:
        names = {t.name for t in await executor.tools()}
        assert {"shell", "view_file", "create_file"} <= names
        unknown = await executor.call("nope", {})
        assert unknown.is_error and "unknown tool 'nope'" in unknown.text
        missing = await executor.call("view_file", {})
        assert missing.is_error and "path" in missing.text
        wrong_type = await executor.call("view_file", {"path": "a.txt", "start_line": "x"})
        assert wrong_type.is_error
        ok = await executor.call("shell", {"command": "cat a.txt; exit 3"})
        assert ok.exit_code == 3 and "hello" in ok.text and ok.duration is not None
        shown = await executor.call("view_file", {"path": "a.txt"})
        assert not shown.is_error and "hello" in shown.text
        assert executor._images({"path": str(tmp_path / "screenshots" / "001-page.png")}) == ["screenshots/001-page.png"]
    finally:
        await executor.close()


async def test_the_tool_servers_share_one_process_unless_asked_not_to(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from stripebench_tui.runtime.tools import SEPARATE_VAR

    ws = tmp_path / "workspace"
    ws.mkdir()
    (tmp_path / "logs").mkdir()
    for separate, processes in (("", 1), ("1", 2)):
        monkeypatch.setenv(SEPARATE_VAR, separate)
        executor = McpToolExecutor(["shell", "files"], workspace=ws, episode_dir=tmp_path, env=None)
        await executor.start()
        try:
            assert len(executor.handles) == processes
            servers = {t.name: t.server for t in await executor.tools()}
            assert servers["shell"] == "shell" and servers["view_file"] == "files"
            shown = await executor.call("view_file", {"path": "."})
            ran = await executor.call("shell", {"command": "pwd"})
            assert not shown.is_error and ran.exit_code == 0 and str(ws) in ran.text
        finally:
            await executor.close()
    assert sorted(p.name for p in (tmp_path / "logs").iterdir()) == ["tools-files.log", "tools-shell+files.log",
                                                                      "tools-shell.log"]


def test_in_the_container_shell_and_files_share_a_process_the_others_another(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from stripebench_tui.core.redact import Redactor
    from stripebench_tui.runtime.docker_sandbox import _DockerToolExecutor

    box = SimpleNamespace(workspace=tmp_path, episode_dir=tmp_path, tool_env=lambda: {}, redactor=Redactor(),
                          exec_argv=lambda argv, interactive: ["docker", "exec", "-i", "box", *argv])
    executor = _DockerToolExecutor(box, ["shell", "browser", "files", "stripe_docs"])  # type: ignore[arg-type]
    assert executor.process_groups() == [["shell", "files"], ["browser", "stripe_docs"]]
    command, args = executor.group_command(["shell", "files"])
    assert command == "docker" and args[-10:] == ["python3", "-m", "stripebench_tui.tools.bundle", "shell", "--workspace",
                                                  str(tmp_path), "--", "files", "--workspace", str(tmp_path)]
    command, args = executor.group_command(["browser", "stripe_docs"])
    assert command == sys.executable and "--screenshots" in args and "docker" not in args


async def test_a_missing_browser_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from stripebench_tui import chromium
    from stripebench_tui.errors import RuntimeProblem

    monkeypatch.setattr(chromium, "find_chromium", lambda: None)
    executor = McpToolExecutor(["shell", "browser"], workspace=tmp_path, episode_dir=tmp_path, env=None)
    with pytest.raises(RuntimeProblem, match="needs Chromium"):
        await executor.start()
    assert executor.handles == {}
    with pytest.raises(RuntimeProblem, match="unknown tool server 'git'"):
        await McpToolExecutor(["git"], workspace=tmp_path, episode_dir=tmp_path, env=None).start()



async def test_the_local_sandbox_starts_graders_processes_tagged_with_the_episode(tmp_path: Path) -> None:
    import json
    import os
    import signal

    from stripebench_tui.envs.catalog import find_environment
    from stripebench_tui.runtime.local import LocalSandbox
    from stripebench_tui.runtime.reaper import TAG_VAR

    (tmp_path / "ep").mkdir()
    box = LocalSandbox(find_environment("tiny-shop"), tmp_path / "ep",
                       {"STRIPE_API_VERSION": "2020-01-01", "STRIPE_SECRET_KEY": "sk_test_x"})
    box.prepare()
    try:
        scratch = box.scratch_dir("grader-app-")
        assert scratch.is_dir() and not any(scratch.iterdir())
        read_end, write_end = os.pipe()
        with os.fdopen(write_end, "wb") as log:
            proc = box.start_process("python3 -c 'import json, os; print(json.dumps(dict(os.environ)), flush=True)'; "
                                     "exec sleep 60", cwd=box.workspace, env={"APP_PORT": "1234"},
                                     unset=("STRIPE_API_VERSION",), log=log)
        try:
            with os.fdopen(read_end, "rb") as out:
                seen = json.loads(out.readline())
            assert seen[TAG_VAR] == box.tag and seen["APP_PORT"] == "1234" and seen["STRIPE_SECRET_KEY"] == "sk_test_x"
            assert "STRIPE_API_VERSION" not in seen and seen["WORKSPACE"] == str(box.workspace)
            assert os.getpgid(proc.pid) == proc.pid  # leads its own group: a grader stops it with killpg
            assert proc.pid in box.leftovers()  # tagged: the watchdog sweeps it if stripebench dies
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)
        scratch.rmdir()
    finally:
        await box.stop()

async def test_tool_server_stderr_is_redacted_on_its_way_to_the_log(tmp_path: Path) -> None:
    import subprocess
    import sys

    from stripebench_tui.core.redact import Redactor

    (tmp_path / "logs").mkdir()
    executor = McpToolExecutor(["shell"], workspace=tmp_path, episode_dir=tmp_path, env=None,
                               redactor=Redactor(["registered-value-0042"]))
    errlog = executor.open_log("shell")  # what a server's stderr is connected to
    script = ("import sys; sys.stderr.buffer.write(b'token registered-value-0042 and sk_test_abcdefghijkl\\n"
              "raw \\xff\\nlast line without newline')")
    subprocess.run([sys.executable, "-c", script], stderr=errlog, check=True)
    await executor.close()  # closes our end and waits for the copier to write the last line
    data = (tmp_path / "logs" / "tools-shell.log").read_bytes()
    assert data == b"token [REDACTED] and sk_test_[REDACTED]\nraw \xff\nlast line without newline"
