"""Making sure no process of an episode outlives it, even when stripebench itself is killed.

Every process an episode starts (services, the seed script, tool servers and what
the agent's shell runs) inherits ``STRIPEBENCH_EPISODE=<tag>`` in its environment.
A small watchdog process (``python -m stripebench_tui.runtime.reaper TAG``, in its
own session so Ctrl+C does not reach it) holds a pipe from the episode: when the
pipe closes — a normal end, or the parent dying from kill -9 — it stops every
process carrying the tag (SIGTERM, then SIGKILL), removes the directories it was
given (the episode's scratch directory, its PostgreSQL cluster) and exits. ``tagged_pids`` is
the same /proc scan, for tests and for the final check of a normal end.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from stripebench_tui.child_env import base_env

TAG_VAR = "STRIPEBENCH_EPISODE"
PR_SET_PDEATHSIG = 1
KILL_WAIT = 1.0  # seconds kill_tagged waits for SIGKILLed processes to be gone


def tagged_pids(tag: str, exclude: set[int] | None = None) -> list[int]:
    """Pids of live processes whose environment has ``STRIPEBENCH_EPISODE=tag`` (ours only: others are unreadable)."""
    needle = f"{TAG_VAR}={tag}".encode()
    skip = {os.getpid(), *(exclude or ())}
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in skip:
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and needle in environ.split(b"\0"):
            found.append(int(entry))
    return found


def kill_tagged(tag: str, grace: float = 2.0, exclude: set[int] | None = None) -> int:
    """SIGTERM every tagged process, SIGKILL what is left after ``grace`` seconds, and return once none is left
    (or after a last second); returns how many there were.

    A process a tagged one starts meanwhile (a shell's child) is signalled too, and SIGKILL is waited for: it is
    not done when ``kill`` returns, and a caller that looks right after must find nothing.
    """
    signalled: set[int] = set()
    term_until = time.monotonic() + grace  # SIGTERM until then, SIGKILL after
    give_up = term_until + KILL_WAIT
    while True:
        alive = tagged_pids(tag, exclude)
        now = time.monotonic()
        if not alive or now >= give_up:
            break
        killing = now >= term_until
        for pid in alive:
            if killing or pid not in signalled:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL if killing else signal.SIGTERM)
                signalled.add(pid)
        # until they exit or the phase ends (at most a moment), then look again for processes started meanwhile
        phase_end = give_up if killing else term_until
        _wait_exits(alive, min(0.2, max(phase_end - time.monotonic(), 0.01)))
    return len(signalled)


def _wait_exits(pids: list[int], timeout: float) -> None:
    """Return when every one of ``pids`` has exited (a zombie counts), or after ``timeout`` seconds: each pid's
    pidfd becomes readable when it exits, so this waits on the kernel rather than polling."""
    fds = []
    for pid in pids:
        with contextlib.suppress(OSError):  # already gone
            fds.append(os.pidfd_open(pid))
    try:
        end = time.monotonic() + timeout
        pending = fds
        while pending:
            left = end - time.monotonic()
            if left <= 0:
                break
            ready, _, _ = select.select(pending, [], [], left)
            pending = [fd for fd in pending if fd not in ready]
    finally:
        for fd in fds:
            os.close(fd)


def die_with_parent() -> None:
    """preexec_fn: have the kernel SIGKILL this child when the process that started it dies."""
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


class Watchdog:
    """The watchdog process for one episode tag; ``close()`` makes it sweep and waits for it.

    After stopping the tagged processes it removes the directories in ``remove`` (what the episode's processes
    leave that nothing else would: its scratch directory, a PostgreSQL cluster). ``hold`` is a file descriptor it
    keeps open until then (the scratch directory's lock, see ``runtime.episode_scratch``)."""

    def __init__(self, tag: str, remove: Sequence[Path] = (), hold: int | None = None) -> None:
        self.tag = tag
        env = {k: v for k, v in base_env().items() if k != TAG_VAR}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "stripebench_tui.runtime.reaper", tag, str(os.getpid()), *map(str, remove)],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env=env, start_new_session=True, close_fds=True, pass_fds=() if hold is None else (hold,),
        )

    def close(self, timeout: float = 10.0) -> None:
        """Close the pipe (the watchdog then stops every tagged process) and wait for it to finish."""
        if self.process.stdin is not None and not self.process.stdin.closed:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _watch(tag: str, remove: Sequence[str] = ()) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # only the pipe closing ends the watch
    with contextlib.suppress(OSError):
        while sys.stdin.buffer.read(4096):
            pass
    kill_tagged(tag)
    for path in remove:  # nothing of the episode runs any more: what it left in them is garbage
        shutil.rmtree(path, ignore_errors=True)


if __name__ == "__main__":
    _watch(sys.argv[1], sys.argv[3:])
