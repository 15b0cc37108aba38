"""An environment's long-running processes: start with bash, health-check, stream logs, restart, stop.

Each service runs in its own process group (so stopping it stops what it
started) with a parent-death signal, and every line it prints becomes a
``service`` event on the bus (and a line in ``logs/<name>.log``, redacted as it is
written with the episode's ``Redactor``: known key shapes and every registered secret).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import re
import signal
import socket
import ssl
from collections import deque
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO

import httpx

from stripebench_tui.core.bus import EventBus
from stripebench_tui.core.events import Service
from stripebench_tui.core.redact import Redactor
from stripebench_tui.runtime.reaper import die_with_parent

STOP_GRACE = 3.0
MAX_LINE = 4000  # a log line longer than this is cut in the event (the log file keeps it whole)
RESTART_LIMIT = 5  # restarts within a run before a crash-looping service is left down
TAIL_LINES = 3  # last log lines a failure message quotes
TAIL_CHARS = 600


class ServiceFailed(Exception):
    """A service did not become healthy (or the seed script failed); the message says why, on one line."""


def log_tail(lines: Iterable[str], count: int = TAIL_LINES) -> str:
    """The last ``count`` non-blank lines of a log on one line (`` | `` between them), or ""."""
    kept = [line.strip() for line in lines if line.strip()][-count:]
    text = " | ".join(kept)
    return text if len(text) <= TAIL_CHARS else "…" + text[-TAIL_CHARS:]


_ERROR_LINE = re.compile(r"(?i)\b(error|not found|cannot|can't|failed|exception)\b")


def error_lines(lines: Iterable[str], most: int = 3) -> list[str]:
    """The first ``most`` distinct lines that read like errors, in the order they were printed (each cut short)."""
    found: list[str] = []
    for line in lines:
        text = line.strip()[:TAIL_CHARS // most]
        if text and _ERROR_LINE.search(text) and text not in found:
            found.append(text)
            if len(found) == most:
                break
    return found


def with_tail(message: str, lines: Iterable[str]) -> str:
    """``message`` with the last lines of the log it is about: the very last first (the error an app died of).

    ``"service app exited …: ModuleNotFoundError: No module named 'flask' (its log before that: … | import flask)"``
    """
    kept = [line.strip() for line in lines if line.strip()][-TAIL_LINES:]
    if not kept:
        return message
    text = f"{message}: {kept[-1][:TAIL_CHARS]}"
    before = log_tail(kept[:-1], TAIL_LINES - 1)
    return text + (f" (its log before that: {before})" if before else "")


async def run_logged(bus: EventBus, name: str, argv: list[str], *, cwd: Path, env: dict[str, str],
                     log_path: Path, timeout: float, tail: deque[str] | None = None,
                     redactor: Redactor | None = None) -> int:
    """Run a short process (the seed script) to its end, its output as ``service`` events; returns its exit code.

    ``tail`` receives the last lines it printed (for a failure message).
    """
    proc = await _spawn(argv, cwd, env)
    redactor = redactor or Redactor()
    await bus.publish(Service(service=name, status="starting", pid=proc.pid, text=" ".join(argv)))
    with open(log_path, "ab") as log:
        readers = [asyncio.create_task(_pump(bus, name, s, kind, log, redactor, tail)) for s, kind in
                   ((proc.stdout, "stdout"), (proc.stderr, "stderr"))]
        try:
            code = await asyncio.wait_for(exited(proc), timeout)
        except TimeoutError:
            _killpg(proc.pid, signal.SIGKILL)
            await exited(proc)
            raise ServiceFailed(with_tail(f"{name} did not finish within {timeout:g} s", tail or ())) from None
        except BaseException:  # cancelled (the operator stopped the episode): leave nothing running
            _killpg(proc.pid, signal.SIGKILL)
            raise
        finally:
            await asyncio.gather(*readers, return_exceptions=True)
    await bus.publish(Service(service=name, status="exited", exit_code=code, pid=proc.pid))
    return code


async def _spawn(argv: list[str], cwd: Path, env: dict[str, str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *argv, cwd=str(cwd), env=env, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        start_new_session=True, preexec_fn=die_with_parent,
    )


async def _pump(bus: EventBus, name: str, stream: asyncio.StreamReader | None, kind: str, log: BinaryIO,
                redactor: Redactor, tail: deque[str] | None = None) -> None:
    if stream is None:
        return
    while True:
        try:
            line = await stream.readline()
        except ValueError:  # a line beyond the reader's limit: take what is there
            line = await stream.read(64 * 1024)
        if not line:
            return
        line = redactor.data(line)  # the log, the tail and the events never hold a registered secret
        log.write(line)
        log.flush()
        text = line.decode("utf-8", "replace").rstrip("\r\n")
        if tail is not None:
            tail.append(text[:MAX_LINE])
        if len(text) > MAX_LINE:
            text = text[:MAX_LINE] + " …[cut]"
        await bus.publish(Service(service=name, status="log", stream=kind, text=text))


async def _settle(tasks: list[asyncio.Task[None]], timeout: float = 1.0) -> None:
    """Let log readers print the last lines, but never wait on a pipe some stray process still holds."""
    if tasks:
        _, pending = await asyncio.wait(tasks, timeout=timeout)
        for task in pending:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def exited(proc: asyncio.subprocess.Process) -> int:
    """The exit code once the process itself ended.

    ``Process.wait()`` also waits for its pipes to close, which never happens while a
    background child of a service still holds them; a pidfd tells the exit alone.
    """
    if proc.returncode is None:
        try:
            fd = os.pidfd_open(proc.pid)
        except (ProcessLookupError, OSError):
            fd = -1
        if fd >= 0:
            loop = asyncio.get_running_loop()
            gone = loop.create_future()
            def wake() -> None:
                if not gone.done():
                    gone.set_result(None)

            loop.add_reader(fd, wake)
            try:
                await gone
            finally:
                loop.remove_reader(fd)
                os.close(fd)
        while proc.returncode is None:  # the child watcher records the code a moment later
            await asyncio.sleep(0.005)
    return proc.returncode


def _killpg(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


@functools.lru_cache(maxsize=1)
def _tls() -> ssl.SSLContext:
    # One TLS context for every probe: building one loads the CA bundle (tens of ms of CPU), and a service's
    # health is probed ten times a second until it answers.
    return httpx.create_ssl_context()


async def probe_status(health: dict[str, str], timeout: float = 1.0) -> int | None:
    """One health probe's answer: the HTTP status (200 for an accepted TCP connection), None for no answer."""
    if health.get("http"):
        try:
            async with httpx.AsyncClient(timeout=timeout, trust_env=False, verify=_tls()) as client:
                response = await client.get(health["http"])
            return response.status_code
        except httpx.HTTPError:
            return None
    host, _, port = health["tcp"].rpartition(":")
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host or "127.0.0.1", int(port)), timeout)
    except (TimeoutError, OSError, ValueError):
        return None
    writer.close()
    with contextlib.suppress(Exception):
        await writer.wait_closed()
    return 200


class ServiceProcess:
    """One running service of the episode."""

    def __init__(self, bus: EventBus, name: str, command: str, *, cwd: Path, env: dict[str, str], log_path: Path,
                 health: dict[str, str] | None = None, health_timeout: float = 30.0, restart: bool = False,
                 redactor: Redactor | None = None, fail_on_5xx: bool = False) -> None:
        self.bus, self.name, self.command = bus, name, command
        self.fail_on_5xx = fail_on_5xx  # a 5xx answer to the health check ends the wait (see Health.fail_on_5xx)
        self.redactor = redactor or Redactor()  # applied to the log file as lines are written
        self.cwd, self.env, self.log_path = cwd, env, log_path
        self.health, self.health_timeout, self.restart = health, health_timeout, restart
        self.proc: asyncio.subprocess.Process | None = None
        self.restarts = 0
        self._stopping = False
        self._monitor: asyncio.Task[None] | None = None
        self._readers: list[asyncio.Task[None]] = []
        self.tail: deque[str] = deque(maxlen=200)  # the last lines it printed (why it died)
        self._log = open(log_path, "ab")

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    async def start(self) -> None:
        """Start the process and wait until it is healthy; ServiceFailed otherwise (the process is then stopped)."""
        await self._launch()
        if self.health:
            await self._wait_healthy()
        await self.bus.publish(Service(service=self.name, status="healthy", pid=self.pid))
        self._monitor = asyncio.create_task(self._watch(), name=f"service:{self.name}")

    async def _launch(self) -> None:
        self.proc = await _spawn(["bash", "-c", self.command], self.cwd, self.env)
        await self.bus.publish(Service(service=self.name, status="starting", pid=self.proc.pid, text=self.command))
        self._readers = [asyncio.create_task(_pump(self.bus, self.name, s, kind, self._log, self.redactor, self.tail))
                         for s, kind in
                         ((self.proc.stdout, "stdout"), (self.proc.stderr, "stderr"))]

    async def _wait_healthy(self) -> None:
        assert self.proc is not None and self.health is not None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.health_timeout
        target = self.health.get("http") or f"tcp {self.health.get('tcp')}"
        while True:
            if self.proc.returncode is not None:
                await _settle(self._readers)
                why = with_tail(f"service {self.name} exited with code {self.proc.returncode} before it was healthy "
                                f"({target})", self.tail)
                break
            status = await probe_status(self.health)
            if status is not None and status < 400:
                return
            if status is not None and status >= 500 and self.fail_on_5xx:
                await _settle(self._readers)
                why = f"service {self.name} answered HTTP {status} at {target}: it is up but broken"
                errors = error_lines(self.tail)  # a compiler's error comes long before the last lines
                why = (f"{why}: {' | '.join(errors)} (see {self.log_path})" if errors
                       else with_tail(f"{why} (see {self.log_path})", self.tail))
                break
            if loop.time() > deadline:
                why = with_tail(f"service {self.name} failed its health check: no answer from {target} within "
                                f"{self.health_timeout:g} s", self.tail)
                break
            await asyncio.sleep(0.1)
        await self.bus.publish(Service(service=self.name, status="unhealthy", text=why, pid=self.pid,
                                       exit_code=self.proc.returncode))
        await self.stop(quiet=True)
        raise ServiceFailed(why)

    async def _watch(self) -> None:
        # Report exits; restart the service when the manifest asks for it (agents often kill and restart apps).
        while self.proc is not None:
            code = await exited(self.proc)
            if self._stopping:
                return
            _killpg(self.proc.pid, signal.SIGKILL)  # leave nothing the exited leader started
            await _settle(self._readers)
            await self.bus.publish(Service(service=self.name, status="exited", exit_code=code, pid=self.proc.pid,
                                           text=log_tail(self.tail, 1) if code else ""))
            if not self.restart or self.restarts >= RESTART_LIMIT:
                return
            self.restarts += 1
            await asyncio.sleep(min(2.0, 0.2 * self.restarts))
            if self._stopping:
                return
            await self._launch()

    async def stop(self, quiet: bool = False) -> None:
        """SIGTERM the process group, SIGKILL it after a grace period, and wait for the leader."""
        self._stopping = True
        if self._monitor is not None and self._monitor is not asyncio.current_task():
            self._monitor.cancel()
            await asyncio.gather(self._monitor, return_exceptions=True)
        proc = self.proc
        if proc is not None:
            _killpg(proc.pid, signal.SIGTERM)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(exited(proc), STOP_GRACE)
            _killpg(proc.pid, signal.SIGKILL)  # children of the leader may linger after it exits
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(proc.wait(), STOP_GRACE)
            for task in self._readers:
                task.cancel()
            await asyncio.gather(*self._readers, return_exceptions=True)
            if not quiet:
                await self.bus.publish(Service(service=self.name, status="stopped", pid=proc.pid,
                                               exit_code=proc.returncode))
        if not self._log.closed:
            self._log.close()


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    """Whether nothing listens on ``port`` (checked by binding it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


__all__ = ["ServiceFailed", "ServiceProcess", "free_port", "log_tail", "port_is_free", "probe_status", "run_logged",
           "with_tail"]
