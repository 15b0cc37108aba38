"""Building an entry of a cache that several processes share, once, and never using a half-built one.

Batch workers, a second terminal and the TUI may all want the same cached thing at once (a grader's virtualenv,
Node from the npm registry, pnpm, a harness, the docs index). Every build of such an entry goes through here:

* one build at a time across processes: an exclusive ``flock`` on a lock file beside the entry
  (``.<name>.lock``; the kernel drops it when its holder dies, ``kill -9`` included, so a dead builder never
  blocks anyone);
* an entry counts only once complete: built in a staging directory beside it (``.<name>.build-<pid>-<rnd>``) and
  renamed into place, or — for what cannot move, a virtualenv names its own path — built in place with a marker
  file (``MARKER``) written last, both under the lock;
* what a killed build left (an entry without its marker, a staging directory) is removed and built again by the
  next process that holds the lock.

``fcntl.flock`` rather than the ``filelock`` package: the lock itself is three standard-library calls on Linux (all
we run on: the reaper reads /proc), what matters here is the publish protocol around it, which no lock library
gives, and the async wait must be cancellable (a thread blocked in flock is not).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import shutil
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

MARKER = ".stripebench-complete"  # written into an entry last, under the lock: the entry is whole
LOCK_POLL = 0.2  # seconds between tries while another process holds a lock (async waits only)


def lock_file(entry: Path) -> Path:
    """The lock file of ``entry``: beside it, so it lives and dies with the cache it guards."""
    return entry.with_name(f".{entry.name}.lock")


def _open_lock(path: Path) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)


@contextlib.contextmanager
def locked(path: Path, on_wait: Callable[[], object] | None = None) -> Iterator[None]:
    """Hold an exclusive lock on the file ``path`` (made if missing) across processes; ``on_wait()`` is called
    once if another process holds it first."""
    fd = _open_lock(path)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if on_wait is not None:
                on_wait()
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


@contextlib.asynccontextmanager
async def locked_async(path: Path, on_wait: Callable[[], object] | None = None) -> AsyncIterator[None]:
    """``locked`` for a coroutine: waits without blocking the event loop, and can be cancelled while it waits."""
    fd = _open_lock(path)
    try:
        said = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not said and on_wait is not None:
                    on_wait()
                said = True
                await asyncio.sleep(LOCK_POLL)  # polling a kernel lock: there is no event to wait on
        yield
    finally:
        os.close(fd)


def is_complete(entry: Path) -> bool:
    """Whether ``entry`` is a whole, published build."""
    return (entry / MARKER).is_file()


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink(missing_ok=True)
    elif path.exists():
        shutil.rmtree(path, ignore_errors=True)


def _clear_leftovers(entry: Path) -> None:
    """Under the lock: the entry when half built, and every staging directory of it (their builders are dead)."""
    if not is_complete(entry):
        _remove(entry)
    for stale in entry.parent.glob(f".{entry.name}.build-*"):
        _remove(stale)


def _start(entry: Path, in_place: bool) -> Path:
    _clear_leftovers(entry)
    if in_place:
        return entry
    return entry.with_name(f".{entry.name}.build-{os.getpid()}-{uuid.uuid4().hex[:8]}")


def _publish(entry: Path, target: Path) -> None:
    (target / MARKER).write_text("complete\n", encoding="utf-8")
    if target != entry:
        os.rename(target, entry)  # atomic: the entry appears whole or not at all


def ensure_entry(entry: Path, build: Callable[[Path], object], *, in_place: bool = False,
                 on_wait: Callable[[], object] | None = None) -> Path:
    """``entry``, built first by ``build(target)`` unless another process has built it (see the module docstring).

    ``build`` makes the directory ``target``: a staging directory beside ``entry`` (it need not exist yet), or
    ``entry`` itself with ``in_place``. It may raise; nothing it left is kept. ``on_wait()`` is called once when
    another process is building the entry and this one waits for it.
    """
    if is_complete(entry):
        return entry
    with locked(lock_file(entry), on_wait):
        if is_complete(entry):  # built by the process we waited for
            return entry
        target = _start(entry, in_place)
        try:
            build(target)
            _publish(entry, target)
        except BaseException:
            _remove(target)
            raise
    return entry


async def ensure_entry_async(entry: Path, build: Callable[[Path], Awaitable[object]], *, in_place: bool = False,
                             on_wait: Callable[[], object] | None = None) -> Path:
    """``ensure_entry`` for a coroutine ``build`` (cancelling it removes what it left)."""
    if is_complete(entry):
        return entry
    async with locked_async(lock_file(entry), on_wait):
        if is_complete(entry):
            return entry
        target = await asyncio.to_thread(_start, entry, in_place)
        try:
            await build(target)
            _publish(entry, target)
        except BaseException:
            _remove(target)
            raise
    return entry


def publish_file(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write ``path`` whole or not at all: a file of its own beside it (``mode``: its permissions), renamed over
    it; two writers never share one temporary file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    staged = path.with_name(f".{path.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        staged.write_bytes(data)
        if mode is not None:
            staged.chmod(mode)
        os.replace(staged, path)
    except BaseException:
        staged.unlink(missing_ok=True)
        raise


__all__ = ["LOCK_POLL", "MARKER", "ensure_entry", "ensure_entry_async", "is_complete", "lock_file", "locked",
           "locked_async", "publish_file"]
