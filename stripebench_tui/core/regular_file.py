"""Opening a file that is meant to be a file: a FIFO, a device or a socket is refused at once, never read.

``open(path)`` on a FIFO waits until a writer comes (for ever, if none does), and ``/dev/zero`` or
``/dev/urandom`` never end: given as a trace or a results file, either would hang the command or grow it until
the kernel stops it. ``open_regular`` opens with ``O_NONBLOCK`` (opening a FIFO for reading then returns at once),
checks the opened descriptor is a regular file, and otherwise raises ``NotRegularFile`` (an ``OSError`` whose
``strerror`` says what the path is instead: ``not a regular file (a FIFO)``).
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO


class NotRegularFile(OSError):
    """The path is a FIFO, a device, a socket or a directory; ``kind`` says which."""

    def __init__(self, path: str | os.PathLike[str], kind: str) -> None:
        super().__init__(errno.EINVAL, f"not a regular file ({kind})", os.fspath(path))
        self.kind = kind


def kind_of(mode: int) -> str:
    """What a file of ``st_mode`` ``mode`` is, in words: ``a FIFO``, ``a directory``, ``a socket``, ``a device``."""
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """``path`` opened for binary reading if it is a regular file (links followed); ``NotRegularFile`` or another
    ``OSError`` (``FileNotFoundError``…) otherwise."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(path, kind_of(mode))
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")  # O_NONBLOCK changes nothing for a regular file


class TooLarge(OSError):
    """A regular file larger than the reader's cap."""

    def __init__(self, path: str | os.PathLike[str], cap: int) -> None:
        super().__init__(f"larger than {cap >> 20} MiB" if cap >= 1 << 20 else f"larger than {cap:,} bytes")
        self.strerror = str(self)
        self.filename = os.fspath(path)


def read_capped(path: str | os.PathLike[str], cap: int) -> bytes:
    """The whole of regular file ``path`` if it holds at most ``cap`` bytes; ``NotRegularFile``, ``TooLarge`` or
    another ``OSError`` otherwise (a FIFO never blocks the reader, ``/dev/zero`` never fills its memory)."""
    with open_regular(path) as f:
        data = f.read(cap + 1)
    if len(data) > cap:
        raise TooLarge(path, cap)
    return data


__all__ = ["NotRegularFile", "TooLarge", "kind_of", "open_regular", "read_capped"]
