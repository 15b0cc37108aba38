"""Ports an environment cannot move: held by one episode at a time, across processes.

Most services get a free port chosen per episode. Some published folders cannot: galtee's ``server.js`` listens on
4242 and its ``grade.sh`` waits there, the Sinatra gyms too. Two such episodes at once (two batch workers, a
second terminal, a validate beside a sweep) would each start their server on 4242 and one grade the other's app.
An environment lists those ports in its manifest (``fixed_ports``); ``hold_ports`` holds an exclusive ``flock``
per port for the episode's whole life, so the second episode waits for the first (saying so once, naming the
holder) instead of colliding. The kernel drops the lock when its holder dies (``kill -9`` included).

The lock files live in a directory of this user's own (mode 0700, ownership checked): another local user can
neither block our episodes through it nor forge a holder line. A process that is not an episode (or another user's
episode) holding the port is found by trying it once the lock is ours: that is ``PortTaken``, with the fix.
"""

from __future__ import annotations

import contextlib
import os
import socket
import stat
import tempfile
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path

from stripebench_tui.errors import RuntimeProblem
from stripebench_tui.shared_cache import locked_async

DIR_VAR = "STRIPEBENCH_PORT_LOCKS"  # where the lock files live (default: a private directory under /tmp)
# Ports are the machine's, so the default is the same for every process of this user whatever its TMPDIR (an
# episode's children get a TMPDIR of their own).
SHARED_TMP = Path("/tmp")

Say = Callable[[str], object]


class PortTaken(RuntimeProblem):
    """A fixed port answers although no episode of ours holds it."""


def _shared_tmp() -> Path:
    return SHARED_TMP if SHARED_TMP.is_dir() else Path(tempfile.gettempdir())


def lock_dir() -> Path:
    """This user's directory of port locks, made private; RuntimeProblem when it is not ours or not private."""
    path = Path(os.environ.get(DIR_VAR) or _shared_tmp() / f"stripebench-{os.getuid()}-ports")
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = path.lstat()
    except OSError as exc:
        raise RuntimeProblem(f"cannot make the port lock directory {path}: {exc.strerror}") from None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise RuntimeProblem(f"{path} is not a private directory of this user (mode 0700): remove it, or set "
                             f"{DIR_VAR} to one")
    return path


def _holder_file(directory: Path, port: int) -> Path:
    return directory / f"port-{port}.holder"


def holder(port: int, directory: Path | None = None) -> str:
    """Who holds ``port`` now, as its holder wrote it ("" when unknown)."""
    try:
        return _holder_file(directory or lock_dir(), port).read_text(encoding="utf-8").strip()[:200]
    except OSError:
        return ""


def answers(port: int, host: str = "127.0.0.1") -> bool:
    """Whether something accepts TCP connections on ``host:port``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        return probe.connect_ex((host, port)) == 0


@contextlib.asynccontextmanager
async def hold_ports(ports: Sequence[int], what: str, say: Say | None = None) -> AsyncIterator[None]:
    """Hold every port of ``ports`` (in ascending order: two episodes never wait on each other) until the block ends.

    ``what`` names this holder for whoever waits (e.g. "galtee-basic, episode ep-…"); ``say`` hears one line per
    port this call waits for. PortTaken when, once the lock is ours, something still answers on the port.
    """
    if not ports:
        yield
        return
    directory = lock_dir()
    async with contextlib.AsyncExitStack() as stack:
        for port in sorted(set(ports)):
            def waiting(port: int = port) -> None:
                if say is not None:
                    who = holder(port, directory)
                    say(f"waiting for port {port}: another episode holds it ({who or 'holder unknown'})")

            await stack.enter_async_context(locked_async(directory / f"port-{port}.lock", waiting))
            if answers(port):
                raise PortTaken(f"port {port} is in use by a process that is not an episode of this user: "
                                f"{what} needs it (stop that process first)")
            _holder_file(directory, port).write_text(f"pid {os.getpid()}: {what}\n", encoding="utf-8")
        yield
