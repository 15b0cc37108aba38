"""Writing a trace: header first, then one redacted event per line, flushed per event, fsync per turn.

Huge tool outputs are capped inline and kept whole in ``NAME.jsonl.d/outputs/``;
``NAME.jsonl.d/turns.idx`` gets a record (turn, byte offset) whenever a new turn
starts, so a reader can jump to a turn without scanning (see ``trace`` and ``turns_sidecar``).
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterable
from pathlib import Path

from stripebench_tui.core import turns_sidecar
from stripebench_tui.core.events import SCHEMA, Event, Header, ToolResult, event_from_dict
from stripebench_tui.core.redact import Redactor
from stripebench_tui.core.trace_check import LineError, parse_header
from stripebench_tui.errors import BadFileError


class TraceError(BadFileError):
    """A trace that cannot be read; the message is one line, ``PATH:LINE: reason`` or ``PATH: reason``."""


def sidecar_dir(trace_path: str | os.PathLike[str]) -> Path:
    """The directory that holds a trace's sidecar files."""
    p = Path(trace_path)
    return p.with_name(p.name + ".d")


class TraceWriter:
    """Appends events to a new trace: redacted, huge outputs moved to sidecars, flushed per event."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        header: Header,
        *,
        secrets: Iterable[str] = (),
        inline_cap: int = 64 * 1024,
        overwrite: bool = False,
        resume_at: tuple[int, int] | None = None,
    ) -> None:
        self.path = Path(path)
        self.inline_cap = inline_cap
        self._redactor = Redactor(secrets)
        self._sidecars = sidecar_dir(self.path)
        if resume_at is not None:
            self._reopen(*resume_at)
            return
        try:
            self._f = open(self.path, "wb" if overwrite else "xb")
        except FileExistsError:
            raise TraceError(f"{self.path}: already exists; not overwriting it") from None
        except OSError as exc:
            raise TraceError(f"{self.path}: cannot create ({exc.strerror})") from None
        self._sidecars.mkdir(exist_ok=True)
        self._index_f = open(self._sidecars / "turns.idx", "wb")
        self._index_f.write(turns_sidecar.header())
        head = self._redactor.value(dataclasses.replace(header, schema=SCHEMA).to_dict())
        self.header: Header = event_from_dict(head)  # type: ignore[assignment]
        self._offset = 0
        self._append(head)
        self._seq = 0
        self._turn: int | None = None
        self.closed = False

    def _reopen(self, next_seq: int, turn: int) -> None:
        """Append to the existing trace (the ``header`` argument unused: line 1 is kept): its next event is seq ``next_seq``, and
        ``turn`` is the turn its last event belongs to (a resumed episode; the caller truncated it first)."""
        try:
            with open(self.path, "rb") as fh:
                first = fh.readline()
            self.header = parse_header(first)
            self._f = open(self.path, "ab")
            self._index_f = open(self._sidecars / "turns.idx", "ab")
        except OSError as exc:
            raise TraceError(f"{self.path}: cannot append ({exc.strerror})") from None
        except LineError as exc:
            raise TraceError(f"{self.path}:1: {exc}") from None
        self._offset = self.path.stat().st_size
        self._seq = next_seq
        self._turn = turn
        self.closed = False

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add_secret(self, value: str) -> None:
        """Redact this literal value from every event written from now on."""
        self._redactor.add_secret(value)

    def write(self, event: Event) -> Event:
        """Append one event (seq assigned, secrets redacted, huge output capped); returns it as written."""
        if self.closed:
            raise ValueError("write to a closed TraceWriter")
        d = self._redactor.value(dataclasses.replace(event, seq=self._seq).to_dict())
        if d["type"] == ToolResult.type:
            self._cap_output(d)
        if d["turn"] != self._turn:
            self._turn = d["turn"]
            self._index_f.write(turns_sidecar.record(d["turn"], self._offset))
            self._index_f.flush()
        self._append(d)
        self._seq += 1
        return event_from_dict(d)

    def _cap_output(self, d: dict) -> None:
        data = d["output"].encode("utf-8", "replace") if isinstance(d.get("output"), str) else b""
        if len(data) <= self.inline_cap:
            return
        rel = Path(self._sidecars.name) / "outputs" / f"{d['seq']:08d}.txt"
        target = self.path.parent / rel
        target.parent.mkdir(exist_ok=True)
        target.write_bytes(data)
        d["output"] = data[: self.inline_cap].decode("utf-8", "ignore")  # "ignore" drops a cut character
        d["output_bytes"] = len(data)
        d["sidecar"] = rel.as_posix()

    def _append(self, d: dict) -> None:
        line = json.dumps(d, ensure_ascii=False, separators=(",", ":"), default=str).encode("utf-8") + b"\n"
        self._f.write(line)
        self._f.flush()
        self._offset += len(line)

    def end_turn(self) -> None:
        """Make everything written so far durable (fsync), as at every turn boundary."""
        self._f.flush()
        os.fsync(self._f.fileno())
        self._index_f.flush()
        os.fsync(self._index_f.fileno())

    def close(self) -> None:
        """Flush, fsync and close (idempotent)."""
        if self.closed:
            return
        self.end_turn()
        self._f.close()
        self._index_f.close()
        self.closed = True


__all__ = ["TraceError", "TraceWriter", "sidecar_dir"]
