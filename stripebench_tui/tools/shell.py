"""The ``shell`` tool server: run commands in the episode workspace.

Run it as ``python -m stripebench_tui.tools.shell --workspace DIR [--timeout S] [--max-output BYTES]``.
Commands inherit this server's environment (the driver sets STRIPE_API_BASE and
friends there); each runs in its own process group, and every process still
running is stopped when the server exits.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult

from stripebench_tui.tools import processes
from stripebench_tui.tools.serving import Served, argument_parser, new_server, run, tool_error, tool_result, workspace_dir

BACKGROUND_OUTPUT_CAP = 64 * 1024


@dataclass
class BackgroundJob:
    """A command left running in the background."""

    id: int
    command: str
    process: processes.Process


class Shell:
    """The shell tool's state: settings, and the background jobs it has started."""

    def __init__(self, timeout: float, max_output: int, login: bool) -> None:
        self.timeout = timeout
        self.max_output = max_output
        self.login = login
        self.jobs: dict[int, BackgroundJob] = {}
        self.running: set[processes.Process] = set()  # foreground commands in progress
        self._next_job = 1
        self.env = dict(os.environ)
        # Pagers would wait for a keypress that never comes.
        self.env.setdefault("PAGER", "cat")
        self.env.setdefault("GIT_PAGER", "cat")

    def _start(self, command: str, cap: int) -> processes.Process:
        argv = None if self.login else processes.direct_argv(command)
        if argv is not None:
            try:
                return processes.Process(argv, self.env, cap)
            except OSError:
                pass  # let bash report "command not found", "permission denied" etc. the usual way
        return processes.Process(processes.shell_argv(command, self.login), self.env, cap)

    def _add_job(self, command: str, process: processes.Process) -> BackgroundJob:
        job = BackgroundJob(self._next_job, command, process)
        self.jobs[job.id] = job
        self._next_job += 1
        return job

    async def run(self, command: str, timeout: float | None, background: bool) -> CallToolResult:
        """Run one command and describe what happened."""
        if not command.strip():
            return tool_error("empty command: pass the shell command to run, e.g. 'ls -la'")
        try:
            return await self._run(command, timeout, background)
        except OSError as exc:  # e.g. a command line longer than the system allows
            return tool_error(f"could not start the command: {exc.strerror or exc}")

    async def _run(self, command: str, timeout: float | None, background: bool) -> CallToolResult:
        command, ampersand = processes.split_trailing_ampersand(command)
        if background or ampersand:
            job = self._add_job(command, self._start(command, BACKGROUND_OUTPUT_CAP))
            data = {"background_job": job.id, "pid": job.process.pid}
            return tool_result(
                f"started background job {job.id} (pid {job.process.pid}): {command}\n"
                "use list_background to see its output, stop_background to stop it",
                data,
            )
        limit = self.timeout if timeout is None else timeout
        if limit <= 0:
            return tool_error(f"timeout must be positive seconds, got {timeout}")
        process = self._start(command, self.max_output)
        self.running.add(process)
        try:
            finished = await process.wait(limit)
        except asyncio.CancelledError:  # the client went away mid-call: leave nothing behind
            await process.kill(grace=0.5)
            raise
        finally:
            self.running.discard(process)
        if not finished:
            await process.kill()
            text = process.output.text()
            return tool_error(
                f"{text}\n[timed out after {limit:g} s; stopped the command and everything it started]",
                self._data(process, timed_out=True),
            )
        note = ""
        job_id = None
        if process.output_open:
            # Something the command started still holds its output: keep it as a job rather
            # than letting it run unseen (and it will be stopped with the server).
            job_id = self._add_job(f"(left running by) {command}", process).id
            note = f"\n[processes started by this command are still running as background job {job_id}]"
        footer = f"[exit {process.exit_code} · {process.duration:.2f} s]"
        text = process.output.text()
        separator = "\n" if text and not text.endswith("\n") else ""
        return tool_result(f"{text}{separator}{footer}{note}", self._data(process, background_job=job_id))

    @staticmethod
    def _data(process: processes.Process, timed_out: bool = False, background_job: int | None = None) -> dict:
        return {
            "exit_code": process.exit_code,
            "duration_s": round(process.duration, 4),
            "timed_out": timed_out,
            "output_bytes": process.output.total,
            "cut_bytes": process.output.cut,
            "background_job": background_job,
        }

    def list_jobs(self, output_lines: int) -> CallToolResult:
        """Describe every background job, with the last lines of its output."""
        if not self.jobs:
            return tool_result("no background jobs", {"jobs": []})
        parts, rows = [], []
        for job in self.jobs.values():
            process = job.process
            process.detach_output_if_done()
            if process.running:
                state = "running"
            elif process.group_running:
                state = f"exited {process.exit_code}, processes it started still running"
            else:
                state = f"exited {process.exit_code}"
            rows.append({"id": job.id, "pid": process.pid, "command": job.command, "running": process.group_running,
                         "exit_code": process.exit_code, "duration_s": round(process.duration, 2)})  # fmt: skip
            parts.append(f"job {job.id} · pid {process.pid} · {state} · {process.duration:.1f} s · {job.command}")
            if output_lines > 0:
                tail = process.output.text().splitlines()[-output_lines:]
                parts.extend(f"    {line}" for line in tail)
        return tool_result("\n".join(parts), {"jobs": rows})

    async def stop(self, job_id: int) -> CallToolResult:
        """Stop a background job's whole process group and forget the job."""
        job = self.jobs.get(job_id)
        if job is None:
            known = ", ".join(str(j) for j in self.jobs) or "none"
            return tool_error(f"no background job {job_id} (jobs: {known})")
        await job.process.kill()
        del self.jobs[job_id]
        tail = "\n".join(job.process.output.text().splitlines()[-10:])
        return tool_result(
            f"stopped job {job_id} ({job.command}); exit {job.process.exit_code}\n{tail}".rstrip(),
            {"id": job_id, "exit_code": job.process.exit_code},
        )

    async def stop_all(self) -> None:
        """Stop every job and running command, all at once; called when the server exits."""
        doomed = [job.process for job in self.jobs.values()] + list(self.running)
        await asyncio.gather(*(process.kill(grace=0.5) for process in doomed), return_exceptions=True)
        self.jobs.clear()
        self.running.clear()


def build_server(shell: Shell) -> MCPServer:
    """The MCP server exposing ``shell``'s tools."""
    server = new_server("shell", "Run shell commands in the episode workspace.")

    @server.tool(name="shell")
    async def run_shell(command: str, timeout_s: float | None = None, background: bool = False) -> CallToolResult:
        """Run a bash command in the workspace; returns its combined stdout/stderr, exit code and duration.

        Long output keeps its beginning and end. Set background=true (or end the command with '&')
        for servers and other long-running processes; see them with list_background.
        """
        return await shell.run(command, timeout_s, background)

    @server.tool()
    async def list_background(output_lines: int = 5) -> CallToolResult:
        """List background jobs (id, pid, running or exit code) with the last lines of their output."""
        return shell.list_jobs(output_lines)

    @server.tool()
    async def stop_background(job_id: int) -> CallToolResult:
        """Stop a background job and every process it started."""
        return await shell.stop(job_id)

    return server


def prepare(argv: list[str] | None = None) -> Served:
    """Parse arguments and move into the workspace; the server and its cleanups, ready to serve."""
    parser = argument_parser("shell", "MCP server that runs shell commands in an episode workspace.")
    parser.add_argument("--timeout", type=float, default=float(os.environ.get("STRIPEBENCH_SHELL_TIMEOUT", 120)),
                        help="default seconds before a command is stopped (default 120)")  # fmt: skip
    parser.add_argument("--max-output", type=int, default=30_000,
                        help="bytes of output kept per command; the middle is cut beyond this (default 30000)")  # fmt: skip
    parser.add_argument("--login", action="store_true",
                        help="run every command through 'bash -lc' (reads profile files, which may reset PATH)")  # fmt: skip
    args = parser.parse_args(argv)
    # Children inherit the server's working directory (posix_spawn has no chdir action).
    os.chdir(workspace_dir(args.workspace))
    shell = Shell(args.timeout, max(args.max_output, 200), args.login)
    return build_server(shell), [shell.stop_all]


def main(argv: list[str] | None = None) -> None:
    """Entry point: parse arguments, move into the workspace, serve over stdio."""
    run(*prepare(argv))


if __name__ == "__main__":
    main()
