"""The turn index of a trace that came without one: found in one streaming pass, kept for the next open.

A trace copied without its ``.d`` folder, imported, or written by another tool has no ``turns.idx``
(``turns_sidecar``). Without it the replay screen used to build the whole state index before its first
paint (45 s and 1.3 GB at a million events) and kept nothing, so every open paid again. Here instead:

- ``TurnScan`` walks the trace line by line and yields each turn as it starts, so the screen paints the
  first turns at once and grows the timeline while the scan goes on. It reads each line's ``turn``
  from the writer's fixed prefix (``{"seq":…,"t":…,"turn":N,``) and parses the JSON only of a line
  that lacks it; nothing of an event is kept, only two integers per turn (``found``), so its memory
  does not grow with the events.
- ``store`` writes what the scan found, in the writer's own format, to the first place that takes it:
  ``NAME.jsonl.d/turns.idx`` beside the trace (only when no index is there: a stale one may be a
  writer's), else stripebench's cache (``$STRIPEBENCH_CACHE/turn-index/<key>.idx``, the key a hash of
  the trace's real path, size and modification time, so a changed trace never meets an old index).
  Either is written to a temporary file beside it under an exclusive lock on its folder, then renamed.
- ``cached`` reads the cache's entry back; the reader checks it as it checks the writer's index.

Traces below ``MIN_BYTES`` are left alone: their whole index takes a few milliseconds.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import re
import sys
from array import array
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from stripebench_tui.core import turns_sidecar
from stripebench_tui.core.episode_files import Refused, read_episode_file
from stripebench_tui.core.turns_sidecar import QuickTurns
from stripebench_tui.core.user_cache import cache_root

MIN_BYTES = 1 << 20  # below this a trace's full index is cheaper than a file
INDEX_NAME = "turns.idx"
CACHE_FOLDER = "turn-index"
# What TraceWriter (and ``testing.big_trace``) start every event line with; group 1 is the turn.
_PREFIX = re.compile(rb'\{"seq":-?\d+,"t":[-+.eE0-9]+,"turn":(-?\d+),')


class TurnScan:
    """One streaming pass over a trace's events (bytes ``start``..``end``), yielding each turn as it starts.

    ``found`` grows as the scan goes (the reader serves turns already found from it); once the iteration is
    over, ``complete`` says whether it reached ``end`` with every turn in one contiguous, increasing run
    (what the turn index can describe). A line that is not a JSON object with an integer ``turn`` stops the
    scan incomplete (the full reader then reports it); so do turns out of order.
    """

    def __init__(self, path: Path, start: int, end: int) -> None:
        self.path = path
        self.start = start
        self.end = end
        self.found = QuickTurns([], array("q"))
        self.complete = False
        self.lines = 0
        self.parsed = 0  # lines whose JSON had to be parsed (no writer's prefix)

    def __iter__(self) -> Iterator[int]:
        turns, starts = self.found.turns, self.found.starts
        match = _PREFIX.match
        pos = self.start
        with open(self.path, "rb") as f:
            f.seek(pos)
            for raw in f:
                here = pos
                pos += len(raw)
                if pos > self.end:
                    break  # written after the trace was opened
                whole = raw.endswith(b"\n")
                m = match(raw) if whole else None
                turn = int(m[1]) if m is not None else self._decode(raw)
                if turn is None:
                    if whole:
                        return  # a damaged line: no index
                    break  # a last line cut short (a crash mid-write) is no event
                self.lines += 1
                if not turns or turn != turns[-1]:
                    if turns and turn < turns[-1]:
                        return  # a turn resumed after a later one: the index cannot describe it
                    starts.append(here)
                    turns.append(turn)
                    yield turn
        self.complete = True

    def _decode(self, raw: bytes) -> int | None:
        """The top-level ``turn`` of one JSON line, or None if the line is not an object with an integer one."""
        self.parsed += 1
        return _turn_of(raw)


def _turn_of(raw: bytes) -> int | None:
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    turn = value.get("turn") if isinstance(value, dict) else None
    return turn if isinstance(turn, int) and not isinstance(turn, bool) else None


def encode(found: QuickTurns) -> bytes:
    """The index file's bytes (the writer's format 2: turn and offset, little-endian, per turn)."""
    numbers = array("q", bytes(16 * len(found.turns)))
    numbers[0::2] = array("q", found.turns)
    numbers[1::2] = array("q", found.starts)
    if sys.byteorder == "big":
        numbers.byteswap()
    return turns_sidecar.header() + numbers.tobytes()


def cache_key(trace: Path, size: int, mtime_ns: int) -> str:
    """The cache entry's name for this trace as it is now (path, size and modification time)."""
    ident = f"{os.path.realpath(trace)}\0{size}\0{mtime_ns}".encode("utf-8", "surrogateescape")
    return hashlib.sha256(ident).hexdigest()[:32]


def cache_folder() -> Path:
    return cache_root() / CACHE_FOLDER


def cached(trace: Path, size: int, mtime_ns: int) -> bytes | None:
    """The cache's index of this trace (as it is now), or None."""
    try:
        return read_episode_file(cache_folder(), f"{cache_key(trace, size, mtime_ns)}.idx")
    except (OSError, Refused):
        return None


def store(trace: Path, size: int, mtime_ns: int, found: QuickTurns) -> Path | None:
    """Write the index beside the trace if that folder takes it, else into the cache; where it went (None: nowhere)."""
    data = encode(found)
    side = trace.with_name(trace.name + ".d")
    try:
        if _publish_beside(trace.parent, side.name, data):
            return side / INDEX_NAME
    except OSError:
        pass  # a read-only folder (or a full disk): the cache instead
    folder = cache_folder()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        name = f"{cache_key(trace, size, mtime_ns)}.idx"
        try:
            _publish(fd, name, data, replace=True)
        finally:
            os.close(fd)
    except OSError:
        return None  # no cache either: the next open scans again
    return folder / name


def _publish_beside(parent: Path, side: str, data: bytes) -> bool:
    """Write ``side/turns.idx`` unless one is there; False if ``side`` is not a plain folder or has an index."""
    top = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        try:
            os.mkdir(side, 0o755, dir_fd=top)
        except FileExistsError:
            pass
        try:  # a link (to anywhere) or a file where the folder should be: not ours to write into
            fd = os.open(side, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=top)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                return False
            raise
    finally:
        os.close(top)
    try:
        return _publish(fd, INDEX_NAME, data, replace=False)
    finally:
        os.close(fd)


def _publish(folder_fd: int, name: str, data: bytes, *, replace: bool) -> bool:
    """Write ``name`` in the folder atomically, under an exclusive lock on the folder; False if it exists and
    ``replace`` is off (a writer's index, or another reader's that came first)."""
    with _locked(folder_fd):
        if not replace:
            try:
                os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
                return False
            except FileNotFoundError:
                pass
        staged = f".{name}.{os.getpid()}.tmp"
        fd = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644,
                     dir_fd=folder_fd)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(staged, name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)
        except BaseException:
            try:
                os.unlink(staged, dir_fd=folder_fd)
            except OSError:
                pass
            raise
    return True


@contextmanager
def _locked(folder_fd: int) -> Iterator[None]:
    fcntl.flock(folder_fd, fcntl.LOCK_EX)  # other readers of the same trace publish one at a time
    try:
        yield
    finally:
        fcntl.flock(folder_fd, fcntl.LOCK_UN)


__all__ = ["CACHE_FOLDER", "INDEX_NAME", "MIN_BYTES", "TurnScan", "cache_folder", "cache_key", "cached", "encode",
           "store"]
