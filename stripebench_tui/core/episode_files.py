"""Reading a file that an episode names (a screenshot, a sidecar, the notes, the emulator's state) without leaving it.

An episode directory may come from anyone (a mailed replay, a bug report), and the names in it are its own: a
trace event's ``images`` or ``sidecar``, or files found beside the trace. A crafted folder could name
``../../etc/passwd``, an absolute path, or hold ``leak.png`` as a symbolic link to ``~/.ssh/id_ed25519`` (or its
``screenshots/`` directory as a link to ``/``), and a report would then carry the reader's own files; a FIFO
named ``shot.png`` would hang whoever opens it. Every reader of such a file goes through this module:

- ``episode_file`` resolves a name against the episode directory (symbolic links followed, each compared with the
  resolved directory) and returns the real path, or raises ``Refused``: the name is absolute or has ``..``, it
  or one of its parent directories is a link to somewhere outside, or it is not a regular file (FIFO, device,
  socket, directory). A missing file is an ordinary ``FileNotFoundError``.
- ``open_episode_file`` / ``read_episode_file`` open that real path one component at a time with ``O_NOFOLLOW``
  from the episode directory down, so a link swapped in after the check is refused rather than followed, and
  check the opened file is still a regular one (``O_NONBLOCK``: opening a FIFO swapped in does not block).

Links that stay inside the episode directory are followed: only where a name ends up matters.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

from stripebench_tui.core.regular_file import kind_of

OUTSIDE = "it points outside the episode directory"


class Refused(Exception):
    """An episode file that is not read; ``str()`` says which and why: ``leak.png: refused, it points outside…``."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"{name}: refused, {reason}")
        self.name = name
        self.reason = reason


def _not_regular(name: str, mode: int) -> Refused:
    return Refused(name, f"it is not a regular file ({kind_of(mode)})")


def episode_file(episode_dir: str | os.PathLike[str], name: str | os.PathLike[str]) -> Path:
    """The real path of the regular file ``name`` (relative to ``episode_dir``) if it is inside; else ``Refused``.

    ``FileNotFoundError`` (an ``OSError``) when there is no such file.
    """
    shown = os.fspath(name)
    rel = Path(shown)
    if not shown or rel.is_absolute() or ".." in rel.parts:
        raise Refused(shown, OUTSIDE)
    base = Path(os.path.realpath(episode_dir))
    target = Path(os.path.realpath(base / rel))
    if not target.is_relative_to(base):
        raise Refused(shown, OUTSIDE)
    mode = os.stat(target).st_mode  # realpath left no link to follow
    if not stat.S_ISREG(mode):
        raise _not_regular(shown, mode)
    return target


def open_episode_file(episode_dir: str | os.PathLike[str], name: str | os.PathLike[str]) -> BinaryIO:
    """``name`` opened for reading (binary) if ``episode_file`` allows it; ``Refused`` or ``OSError`` otherwise."""
    shown = os.fspath(name)
    target = episode_file(episode_dir, name)
    base = Path(os.path.realpath(episode_dir))
    *dirs, leaf = target.relative_to(base).parts
    # Walk down from the directory itself, refusing any link: the path was checked link-free a moment ago, so a
    # link now means the folder changed under us, and following it could lead anywhere.
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in dirs:
            below = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            os.close(fd)
            fd = below
        file_fd = os.open(leaf, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise Refused(shown, "it was replaced by a link while being opened") from None
        raise
    finally:
        os.close(fd)
    f = os.fdopen(file_fd, "rb")
    mode = os.fstat(file_fd).st_mode
    if not stat.S_ISREG(mode):
        f.close()
        raise _not_regular(shown, mode)
    return f


def read_episode_file(episode_dir: str | os.PathLike[str], name: str | os.PathLike[str]) -> bytes:
    """The bytes of ``name`` inside ``episode_dir`` (see ``open_episode_file``)."""
    with open_episode_file(episode_dir, name) as f:
        return f.read()


__all__ = ["OUTSIDE", "Refused", "episode_file", "open_episode_file", "read_episode_file"]
