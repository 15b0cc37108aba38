"""The recorder: a bus subscriber that writes every event to the episode's trace.

Each event is appended (redacted, capped, flushed) by ``TraceWriter`` as it is
delivered; the driver calls ``end_turn()`` after draining the bus at each turn
end (fsync) and ``close()`` at the end. ``close()`` first hands any events still
queued to the writer synchronously, so it works even while the driver's task is
being cancelled. The recorder is a critical subscriber: if writing fails, the bus
reports the failure and the driver ends the episode with reason ``error``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from stripebench_tui.core.bus import EventBus, Subscription
from stripebench_tui.core.events import Event, Header
from stripebench_tui.core.trace import TraceWriter

# The recorder writes to a local file, so it rarely lags; when it does, waiting longer beats losing the trace.
RECORDER_BLOCK_TIMEOUT = 60.0


class RecorderError(RuntimeError):
    """The trace on disk would no longer match the published events."""


class Recorder:
    """Writes the bus's events to a trace with ``TraceWriter``."""

    def __init__(self, writer: TraceWriter) -> None:
        self.writer = writer
        self.written = 0
        self._sub: Subscription | None = None

    @classmethod
    def create(
        cls,
        path: str | os.PathLike[str],
        header: Header,
        *,
        secrets: Iterable[str] = (),
        inline_cap: int = 64 * 1024,
        overwrite: bool = False,
        resume_at: tuple[int, int] | None = None,
    ) -> Recorder:
        """A recorder writing a new trace at ``path`` (the header is written at once); with ``resume_at`` (next seq,
        last turn) one appending to the existing trace there instead (a resumed episode)."""
        recorder = cls(TraceWriter(path, header, secrets=secrets, inline_cap=inline_cap, overwrite=overwrite,
                                   resume_at=resume_at))
        if resume_at is not None:
            recorder.written = resume_at[0]
        return recorder

    @property
    def subscription(self) -> Subscription | None:
        """Its subscription to the bus, once attached."""
        return self._sub

    @property
    def path(self):  # a pathlib.Path
        return self.writer.path

    @property
    def header(self) -> Header:
        """The trace's header as written (redacted)."""
        return self.writer.header

    @property
    def closed(self) -> bool:
        return self.writer.closed

    def attach(self, bus: EventBus) -> Recorder:
        """Subscribe to ``bus``; attach before the first event is published so seq numbers match."""
        if bus.next_seq != self.written:
            raise RecorderError(f"the bus is at seq {bus.next_seq} but the trace has {self.written} events")
        self._sub = bus.subscribe(self.record, name="recorder", critical=True, block_timeout=RECORDER_BLOCK_TIMEOUT)
        return self

    def record(self, event: Event) -> None:
        """Append one event (called by the bus, in seq order)."""
        written = self.writer.write(event)
        self.written += 1
        if written.seq != event.seq:
            raise RecorderError(f"the trace numbered event {event.seq} as {written.seq}: an event was lost")

    def end_turn(self) -> None:
        """Make the trace durable up to here (fsync); the driver calls it after draining the bus."""
        if not self.writer.closed:
            self.writer.end_turn()

    def close(self) -> None:
        """Write whatever is still queued, then fsync and close the trace (idempotent)."""
        if self._sub is not None:
            self._sub.flush_now()
            self._sub.detach("recorder closed")
            self._sub = None
        self.writer.close()


__all__ = ["RECORDER_BLOCK_TIMEOUT", "Recorder", "RecorderError"]
