"""Starting, watching and killing the shell tool's processes.

Each command runs in its own process group, so a timeout or a stop kills
everything it started. Processes are started with ``posix_spawn`` (no fork of
the server's memory) and watched through pidfds on the event loop, without the
thread per child that asyncio's subprocess support uses; commands that need no
shell features are executed directly instead of through bash.
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import signal
import stat
import time
from dataclasses import dataclass, field

# Anything here means the command needs a real shell to mean what it says.
_SHELL_SYNTAX = re.compile(r"[|&;<>()$`\\\"'*?\[\]#~{}\n]")
_SHELL_WORDS = {
    "cd", "export", "source", ".", "alias", "unset", "set", "exec", "eval", "exit", "ulimit", "umask",
    "if", "for", "while", "until", "case", "function", "time", "[[", "{", "!", "declare", "local", "read",
    "shopt", "trap", "wait", "jobs", "fg", "bg", "kill", "type", "command", "builtin", "hash", "history",
}  # fmt: skip


def direct_argv(command: str) -> list[str] | None:
    """The argv to exec when ``command`` is a plain program call, or None when it needs bash."""
    if _SHELL_SYNTAX.search(command):
        return None
    words = command.split()
    if not words or words[0] in _SHELL_WORDS or "=" in words[0]:  # `FOO=1 cmd` sets a variable
        return None
    return words


def split_trailing_ampersand(command: str) -> tuple[str, bool]:
    """``cmd &`` → (``cmd``, True): a trailing lone ``&`` asks for a background run."""
    stripped = command.rstrip()
    if stripped.endswith("&") and not stripped.endswith("&&") and not stripped.endswith("\\&"):
        return stripped[:-1].rstrip(), True
    return command, False


@dataclass
class CappedOutput:
    """Captured output that keeps its head and tail when it grows past ``cap`` bytes."""

    cap: int
    head: bytearray = field(default_factory=bytearray)
    tail: bytearray = field(default_factory=bytearray)
    total: int = 0

    def add(self, data: bytes) -> None:
        """Append a chunk, dropping the middle once over the cap."""
        self.total += len(data)
        room = self.cap // 2 - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            keep = self.cap - self.cap // 2
            if len(self.tail) > 2 * keep:  # trim in batches, not on every chunk
                del self.tail[: len(self.tail) - keep]

    @property
    def cut(self) -> int:
        """How many bytes from the middle were dropped."""
        keep = self.cap - self.cap // 2
        return max(0, self.total - len(self.head) - min(len(self.tail), keep))

    def text(self) -> str:
        """The kept output, with a marker where bytes were cut."""
        keep = self.cap - self.cap // 2
        tail = bytes(self.tail[-keep:]) if keep else b""
        if not self.cut:
            return (bytes(self.head) + tail).decode("utf-8", "replace")
        head = bytes(self.head).decode("utf-8", "replace")
        return f"{head}\n[… {self.cut} bytes cut …]\n{tail.decode('utf-8', 'replace')}"


class Process:
    """One started command: its process group, its merged stdout+stderr, its exit."""

    def __init__(self, argv: list[str], env: dict[str, str], cap: int) -> None:
        self.argv = argv
        self.started = time.monotonic()
        self.output = CappedOutput(cap)
        self.exit_code: int | None = None
        self.ended: float | None = None
        read_fd, write_fd = os.pipe()
        os.set_inheritable(write_fd, False)
        # Resolve the program ourselves: posix_spawnp tries an execve in every PATH directory
        # in turn, which costs ~0.5 ms on a long PATH; a few stat() calls cost microseconds.
        program = find_program(argv[0], env.get("PATH", os.defpath))
        if program is None:
            os.close(read_fd)
            os.close(write_fd)
            raise FileNotFoundError(argv[0])
        try:
            self.pid = os.posix_spawn(
                program,
                argv,
                env,
                file_actions=[
                    (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                    (os.POSIX_SPAWN_DUP2, write_fd, 1),
                    (os.POSIX_SPAWN_DUP2, write_fd, 2),
                ],
                setpgroup=0,
                setsigdef=(signal.SIGINT, signal.SIGTERM, signal.SIGPIPE),
            )
        except BaseException:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)
        self._read_fd = read_fd
        loop = asyncio.get_running_loop()
        self._eof = loop.create_future()
        self._exited = loop.create_future()
        os.set_blocking(read_fd, False)
        loop.add_reader(read_fd, self._on_output)
        self._pidfd: int | None = None
        try:
            self._pidfd = os.pidfd_open(self.pid)
            loop.add_reader(self._pidfd, self._on_exit)
        except (AttributeError, OSError):  # no pidfds (old kernel): poll instead
            self._poller = loop.create_task(self._poll_exit())  # keep a reference: tasks are weakly held

    def _on_output(self) -> None:
        try:
            data = os.read(self._read_fd, 65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            self.output.add(data)
        else:
            self._close_output()

    def _close_output(self) -> None:
        if self._read_fd >= 0:
            asyncio.get_running_loop().remove_reader(self._read_fd)
            os.close(self._read_fd)
            self._read_fd = -1
        if not self._eof.done():
            self._eof.set_result(None)

    def _on_exit(self) -> None:
        if self._reap() and self._pidfd is not None:
            asyncio.get_running_loop().remove_reader(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None

    async def _poll_exit(self) -> None:
        while not self._reap():
            await asyncio.sleep(0.02)

    def _reap(self) -> bool:
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            pid, status = self.pid, 0
        if pid == 0:
            return False
        self.exit_code = os.waitstatus_to_exitcode(status)
        self.ended = time.monotonic()
        if not self._exited.done():
            self._exited.set_result(None)
        return True

    @property
    def running(self) -> bool:
        """Whether the command's own process is still alive."""
        return self.exit_code is None

    @property
    def output_open(self) -> bool:
        """Whether some process may still write output (the pipe has not reached its end)."""
        return self._read_fd >= 0

    @property
    def duration(self) -> float:
        """Seconds from start to exit (or to now, while running)."""
        return (self.ended or time.monotonic()) - self.started

    async def wait(self, timeout: float | None) -> bool:
        """Wait for the process to exit and its output to end; False on timeout."""
        try:
            await asyncio.wait_for(asyncio.shield(self._exited), timeout)
        except TimeoutError:
            return False
        # Output ends when every holder of the pipe is gone; a child left running in the
        # background keeps it open, so give it a moment and then stop waiting for it.
        try:
            await asyncio.wait_for(asyncio.shield(self._eof), 0.05)
        except TimeoutError:
            pass
        return True

    async def kill(self, grace: float = 1.0) -> None:
        """SIGTERM the whole process group, then SIGKILL whatever is left after ``grace`` seconds."""
        self._signal_group(signal.SIGTERM)
        deadline = time.monotonic() + grace
        while self._group_exists() and time.monotonic() < deadline:
            await asyncio.sleep(0.02)  # the loop reaps the leader meanwhile
        if self._group_exists():
            self._signal_group(signal.SIGKILL)
        try:
            await asyncio.wait_for(asyncio.shield(self._exited), 5)
        except TimeoutError:
            pass
        await asyncio.sleep(0)  # let the last output chunks arrive before closing
        self._close_output()

    def _signal_group(self, sig: int) -> None:
        try:
            os.killpg(self.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def _group_exists(self) -> bool:
        return group_has_live_members(self.pid)

    @property
    def group_running(self) -> bool:
        """Whether any process of the command's group is still alive (not only its leader)."""
        return self.running or self._group_exists()

    def detach_output_if_done(self) -> None:
        """Stop reading output once nobody in the group can still write it."""
        if self.exit_code is not None and not self._group_exists():
            self._close_output()


def find_program(name: str, path: str) -> str | None:
    """The file ``name`` runs as, searching ``path`` like execvp does (lean: this is on every call)."""
    if "/" in name:
        return name
    for directory in path.split(os.pathsep):
        candidate = os.path.join(directory or ".", name)
        try:
            mode = os.stat(candidate).st_mode
        except OSError:
            continue
        if stat.S_ISREG(mode) and os.access(candidate, os.X_OK):
            return candidate
    return None


def group_has_live_members(pgid: int) -> bool:
    """Whether a non-zombie process is in group ``pgid``.

    ``killpg(pgid, 0)`` also succeeds for zombies, and in containers whose init does not
    reap orphans those linger, so read /proc where there is one.
    """
    try:
        entries = os.listdir("/proc")
    except OSError:
        try:
            os.killpg(pgid, 0)
            return True
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # Fields after the ")" that closes the command name: state ppid pgrp ...
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


def shell_argv(command: str, login: bool) -> list[str]:
    """argv that runs ``command`` through bash."""
    return ["bash", "-lc" if login else "-c", command]


def describe(argv: list[str]) -> str:
    """A readable one-line form of an argv."""
    if len(argv) == 3 and argv[0] == "bash" and argv[1] in ("-c", "-lc"):
        return argv[2]
    return shlex.join(argv)
