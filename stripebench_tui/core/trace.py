"""Episode traces on disk: the reader (``open_trace``, ``Trace``); the writer lives in ``trace_writer``.

Layout: ``NAME.jsonl`` holds the header line then one event per line. Beside it
``NAME.jsonl.d/`` holds the sidecars: ``outputs/<seq>.txt`` (tool output too
big to keep inline) and ``turns.idx`` (turn → byte offset, appended as the
writer goes, so a reader can jump to any turn before it has scanned the file;
its format is in ``turns_sidecar``).
The sidecar index is only a hint: a reader checks it against the trace and
falls back to scanning when it is missing or stale. Reading writes only the
index of a trace that came without one (``scan_turns``, see ``cold_index``).

Opening is O(1) in trace size (header + tail); ``Trace.index()`` does the one
full pass, after which ``state_at`` is fast (see ``trace_index``).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

from stripebench_tui.core import cold_index, turns_sidecar
from stripebench_tui.core.episode_files import Refused, read_episode_file
from stripebench_tui.core.events import Event, Header, ToolResult
from stripebench_tui.core.regular_file import NotRegularFile, open_regular
from stripebench_tui.core.state import EpisodeState, Reducer
from stripebench_tui.core.trace_check import LineError, parse_event, parse_header
from stripebench_tui.core.trace_index import IndexBuilder, TraceIndex
from stripebench_tui.core.trace_writer import TraceError, TraceWriter, sidecar_dir
from stripebench_tui.core.turns_sidecar import QuickTurns

HEADER_MAX = 4 * 1024 * 1024  # a header line longer than this is not a header
TAIL_WINDOW = 64 * 1024

def _line_number_at(path: Path, offset: int) -> int:
    """1-based line number of the line starting at byte ``offset`` (error path only: O(offset))."""
    n = 1
    with open(path, "rb") as f:
        remaining = offset
        while remaining > 0:
            chunk = f.read(min(remaining, 1 << 20))
            if not chunk:
                break
            n += chunk.count(b"\n")
            remaining -= len(chunk)
    return n


EPISODE_TRACE = "trace.jsonl"  # the trace's name inside an episode directory


class NotATraceError(TraceError):
    """The file's first line is not a stripebench trace header (it may be another format; ``path`` is the file read)."""

    def __init__(self, message: str, path: Path) -> None:
        super().__init__(message)
        self.path = path


def open_trace(path: str | os.PathLike[str]) -> Trace:
    """Open a stripebench trace reading only its header and tail (other formats: ``formats.open_episode``).

    An episode directory stands for the ``trace.jsonl`` inside it.
    """
    p = Path(path)
    if p.is_dir() and (p / EPISODE_TRACE).is_file():
        p = p / EPISODE_TRACE
    try:
        f = open_regular(p)  # a FIFO or a device is refused, not read (it could block or never end)
    except FileNotFoundError:
        raise TraceError(f"{p}: no such file") from None
    except (IsADirectoryError, NotRegularFile) as exc:
        if isinstance(exc, IsADirectoryError) or exc.kind == "a directory":
            raise TraceError(f"{p}: is a directory with no {EPISODE_TRACE}, not a trace file") from None
        raise TraceError(f"{p}: {exc.strerror}, not a trace file") from None
    except OSError as exc:
        raise TraceError(f"{p}: cannot read ({exc.strerror})") from None
    with f:
        head = f.readline(HEADER_MAX)
        if not head:
            raise TraceError(f"{p}: empty file (no trace header)")
        if not head.strip():
            raise TraceError(f"{p}:1: blank line where the trace header should be")
        try:
            header = parse_header(head.rstrip(b"\r\n"))
        except LineError as exc:
            raise NotATraceError(f"{p}:1: {exc}", p) from None
        size = f.seek(0, os.SEEK_END)
        trace = Trace(p, header, header_end=len(head), size=size)
        trace.mtime_ns = os.fstat(f.fileno()).st_mtime_ns
        trace._read_tail(f)
        return trace


class Trace:
    """A trace opened for reading: header and last event at once, everything else on demand."""

    def __init__(self, path: Path, header: Header, *, header_end: int, size: int) -> None:
        self.path = path
        self.header = header
        self.last_event: Event | None = None
        self.truncated = False
        self.size = size
        self.mtime_ns = 0  # with path and size, what the cached turn index is keyed by
        self._header_end = header_end
        self._events: list[Event] | None = None  # in-memory traces (converted from another format)
        self._index: TraceIndex | None = None
        self._lock = threading.Lock()
        self._quick: QuickTurns | None | bool = False  # False: not loaded yet; None: unusable

    @classmethod
    def from_events(cls, path: Path, header: Header, events: list[Event]) -> Trace:
        """A trace held in memory (e.g. converted from ATIF); offsets are event ordinals."""
        t = cls(path, header, header_end=0, size=len(events))
        t._events = list(events)
        t.last_event = t._events[-1] if t._events else None
        return t

    @property
    def in_memory(self) -> bool:
        return self._events is not None

    def _error(self, offset: int, reason: str) -> TraceError:
        return TraceError(f"{self.path}:{_line_number_at(self.path, offset)}: {reason}")

    def _read_tail(self, f) -> None:  # a binary file
        size, start_min = self.size, self._header_end
        if size <= start_min:
            return
        window = TAIL_WINDOW
        while True:
            start = max(start_min, size - window)
            f.seek(start)
            data = f.read(size - start)
            nl = data.rfind(b"\n")
            prev = data.rfind(b"\n", 0, nl) if nl > 0 else -1
            if start > start_min and (nl == -1 or prev == -1):
                window *= 4  # the last complete line starts before this window
                continue
            break
        trailing = data[nl + 1 :]
        if trailing.strip():
            try:
                self.last_event = parse_event(trailing)
                return
            except LineError:
                self.truncated = True  # a crash mid-write: tolerated, the rest is intact
        if nl == -1:
            return
        line_start = start + prev + 1
        try:
            self.last_event = parse_event(data[prev + 1 : nl].rstrip(b"\r"))
        except LineError as exc:
            raise self._error(line_start, str(exc)) from None

    # -- reading events -------------------------------------------------------------------------

    def _scan(self, offset: int | None = None, *, drop_output: bool = False) -> Iterator[tuple[int, int, Event]]:
        """(byte offset, line number or 0 if unknown, event) from ``offset`` (default: the first event)."""
        start = self._header_end if offset is None else offset
        lineno = 1 if offset is None else 0
        with open(self.path, "rb") as f:
            f.seek(start)
            pos = start
            for raw in f:
                if lineno:
                    lineno += 1
                here = pos
                pos += len(raw)
                if not raw.endswith(b"\n"):
                    try:
                        ev = parse_event(raw, drop_output=drop_output)
                    except LineError:
                        self.truncated = True
                        return
                    yield here, lineno, ev
                    return
                try:
                    ev = parse_event(raw[:-1].rstrip(b"\r"), drop_output=drop_output)
                except LineError as exc:
                    if lineno:
                        raise TraceError(f"{self.path}:{lineno}: {exc}") from None
                    raise self._error(here, str(exc)) from None
                yield here, lineno, ev

    def iter_events(self) -> Iterator[Event]:
        """Every event after the header, in order (a truncated final line is skipped)."""
        if self._events is not None:
            yield from self._events
            return
        for _, _, ev in self._scan():
            yield ev

    # -- the index ------------------------------------------------------------------------------

    def index(self) -> TraceIndex:
        """The turn index (one full pass the first time; thread-safe)."""
        with self._lock:
            if self._index is None:
                builder = IndexBuilder(self.header)
                if self._events is not None:
                    for i, ev in enumerate(self._events):
                        builder.add(ev, i)
                else:
                    for offset, _, ev in self._scan(drop_output=True):  # the index keeps no output text
                        builder.add(ev, offset)
                self._index = builder.finish()
            return self._index

    def quick_turns(self) -> list[int] | None:
        """Turn numbers without a full scan (built index, events in memory, or the writer's sidecar); else None."""
        if self._index is not None:
            return list(self._index.turns)
        if self._events is not None:
            return list(dict.fromkeys(ev.turn for ev in self._events))
        quick = self._quick_offsets()
        return list(quick.turns) if quick is not None else None

    def _quick_offsets(self) -> QuickTurns | None:
        """Where each turn starts, from the writer's sidecar index, if it matches this trace; else None."""
        if self._quick is not False:
            return self._quick  # type: ignore[return-value]
        self._quick = None
        try:
            data = read_episode_file(self.path.parent, f"{sidecar_dir(self.path).name}/turns.idx")
        except (OSError, Refused):  # only a hint: without it the reader scans
            data = None
        for found in (data, cold_index.cached(self.path, self.size, self.mtime_ns)):
            quick = turns_sidecar.parse(found) if found else None
            if quick is not None and self._matches(quick):
                self._quick = quick
                return quick
        return None

    def _matches(self, quick: QuickTurns) -> bool:
        """Whether a turn index fits this trace: in range, and its last turn starts where it says (else stale)."""
        if max(quick.starts) >= self.size or self.last_event is None or self.last_event.turn != quick.turns[-1]:
            return False  # a trace shorter than the index, or one whose last turn is another: stale
        got = self._read_turn(quick.starts[-1], quick.turns[-1], trusted=False, limit=1)
        return got is not None

    def scan_turns(self, *, min_bytes: int = cold_index.MIN_BYTES) -> Iterator[int] | None:
        """Turn numbers as one streaming pass finds them, for a trace without a usable turn index; None when it
        has one, is held in memory, or is smaller than ``min_bytes``. Turns found are served at once
        (``events_for_turn``); once the pass is over, ``quick_turns`` lists them all and the index is stored for
        the next open (``cold_index.store``). Thread-safe against the other readers (its own file handle)."""
        if self._events is not None or self.size < min_bytes or self._quick_offsets() is not None:
            return None
        return self._scan_turns()

    def _scan_turns(self) -> Iterator[int]:
        scan = cold_index.TurnScan(self.path, self._header_end, self.size)
        self._quick = scan.found  # grows as the scan goes
        try:
            yield from scan
        finally:
            if scan.complete and scan.found.turns:
                self._quick = scan.found
                cold_index.store(self.path, self.size, self.mtime_ns, scan.found)
            else:
                self._quick = None  # cut short, or turns out of order: the full index is the way

    def events_for_turn(self, turn: int) -> list[Event]:
        """The events of one turn, read from where that turn starts."""
        if self._events is not None:
            return [ev for ev in self._events if ev.turn == turn]
        if self._index is None:
            quick = self._quick_offsets()
            offset = quick.offset_of(turn) if quick is not None else None
            if offset is not None:
                got = self._read_turn(offset, turn, trusted=False)
                if got is not None:
                    return got
                self._quick = None  # the sidecar pointed at the wrong place: stop trusting it
        index = self.index()
        if not index.exact:
            return [ev for ev in self.iter_events() if ev.turn == turn]
        try:
            offset = index.offset_of_turn(turn)
        except KeyError:
            return []
        return self._read_turn(offset, turn, trusted=True) or []

    def _read_turn(self, offset: int, turn: int, *, trusted: bool, limit: int = 0) -> list[Event] | None:
        """Events of ``turn`` from ``offset`` (``limit``: at most that many); None if an untrusted offset is wrong."""
        if not trusted:
            with open(self.path, "rb") as f:
                f.seek(offset - 1)
                if offset < self._header_end or f.read(1) != b"\n":
                    return None
        out: list[Event] = []
        try:
            for _, _, ev in self._scan(offset):
                if ev.turn != turn:
                    break
                out.append(ev)
                if len(out) == limit:
                    break
        except TraceError:
            if trusted:
                raise
            return None
        if not out and not trusted:
            return None
        return out

    def state_at(self, turn: int | None = None, *, keep_output: bool = False) -> EpisodeState:
        """The state after ``turn``'s last event (the latest turn ≤ it; None: the whole episode).

        Fast (no replay) once ``index()`` is built, unless ``keep_output`` or the turns are out of
        order. Treat the result as read-only: its ``Turn`` and ``ObjectView`` records are shared between calls.
        """
        index = self.index()
        if index.exact and not keep_output:
            return index.state_at(turn)
        last = index.end_position(turn)
        reducer = Reducer(clock=lambda: 0.0, keep_output=keep_output)
        reducer.apply(self.header)
        for pos, ev in enumerate(self.iter_events()):
            if pos > last:
                break
            reducer.apply(ev)
        return reducer.state

    def full_output(self, result: ToolResult) -> str:
        """A tool result's whole output: the sidecar's content if any, else the inline output."""
        if result.sidecar:
            try:
                return read_episode_file(self.path.parent, result.sidecar).decode("utf-8", "replace")
            except Refused as exc:
                return result.output + f"\n[full output not shown: sidecar {exc}]"
            except OSError:
                return result.output + f"\n[full output unavailable: sidecar {result.sidecar} is missing]"
        if not result.output and result.output_bytes:
            # The state was reduced without output text: fetch it from the trace.
            for ev in self.events_for_turn(result.turn):
                if isinstance(ev, ToolResult) and ev.seq == result.seq:
                    return self.full_output(ev) if (ev.output or ev.sidecar) else ev.output
        return result.output


__all__ = ["NotATraceError", "Trace", "TraceError", "TraceIndex", "TraceWriter", "open_trace", "sidecar_dir"]
