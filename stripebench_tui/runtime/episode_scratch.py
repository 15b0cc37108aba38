"""A temporary directory of the episode's own: its processes' ``TMPDIR``, gone when the episode is, even after kill -9.

What an episode's processes put in the temporary directory — Chromium's and Playwright's profile directories, a
PostgreSQL cluster the server's user cannot keep in the episode directory — goes into
``<system temp>/stripebench-ep-<tag>/`` (the tag's start: Chromium makes a Unix socket in here) instead of the shared
one. It is removed:

* at the episode's end, by its watchdog (``runtime.reaper``) once every tagged process is stopped;
* when stripebench is killed (kill -9 included), by the same watchdog, which outlives it;
* when even the watchdog was killed, by the next episode that starts on this machine (``sweep_orphans``).

A directory is in use while its ``.lock`` is held (``flock``, shared by the episode's process and its watchdog:
the kernel drops it when both are gone). It is made under a hidden name, locked, then renamed, so a sweep never
sees one that is not locked yet.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

PREFIX = "stripebench-ep-"
TAG_CHARS = 12  # of the episode's tag in the name: Chromium's socket in here must stay within 107 bytes of path
LOCK = ".lock"
TEMP_VARS = ("TMPDIR", "TMP", "TEMP")


@dataclass
class EpisodeScratch:
    """The directory and the open, locked file descriptor that says it is in use."""

    path: Path
    lock_fd: int

    def env(self) -> dict[str, str]:
        """What every process of the episode gets, so that their temporary files land here."""
        return {name: str(self.path) for name in TEMP_VARS}

    def release(self) -> None:
        """Close our copy of the lock (the watchdog holds its own until it has removed the directory)."""
        with contextlib.suppress(OSError):
            os.close(self.lock_fd)


def system_temp() -> Path:
    return Path(tempfile.gettempdir())


def name(tag: str) -> str:
    """The scratch directory's name for the episode ``tag``."""
    return f"{PREFIX}{tag[:TAG_CHARS]}"


def make(tag: str, root: Path | None = None) -> EpisodeScratch:
    """A new scratch directory for the episode ``tag``, locked. Others may traverse it (mode 711): a cluster made
    inside for PostgreSQL's own user must be reachable by that user."""
    root = root or system_temp()
    staging = Path(tempfile.mkdtemp(prefix=f".{PREFIX}", dir=root))
    fd = os.open(staging / LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # new and ours: never held by anyone else
    staging.chmod(0o711)
    final = root / name(tag)
    os.rename(staging, final)
    return EpisodeScratch(final, fd)


def remove(path: Path) -> None:
    """Remove a scratch directory (or any directory an episode left) and everything in it."""
    shutil.rmtree(path, ignore_errors=True)


def sweep_orphans(root: Path | None = None) -> list[Path]:
    """Remove the scratch directories no live episode holds (their episode and its watchdog were killed); returns
    them."""
    root = root or system_temp()
    removed = []
    for path in root.glob(f"{PREFIX}*"):
        if path.is_symlink() or not path.is_dir():
            continue
        try:
            fd = os.open(path / LOCK, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            fd = -1  # made and renamed only once locked: a directory without its lock is a broken leftover
        except OSError:
            continue  # another user's: not ours to judge
        try:
            if fd >= 0:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # its episode (or its watchdog) is alive
            remove(path)
            removed.append(path)
        finally:
            if fd >= 0:
                os.close(fd)
    return removed


__all__ = ["EpisodeScratch", "PREFIX", "TEMP_VARS", "make", "name", "remove", "sweep_orphans", "system_temp"]
