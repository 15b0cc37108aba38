"""The notes of the trace a screen shows (``core.annotations``, kept beside the trace): read once per trace, and the
noted turn to go to next."""

from __future__ import annotations

import bisect
from pathlib import Path

from stripebench_tui.core.annotations import Annotations, notes_path


class TraceNotes:
    """The screen's handle on its trace's notes; ``for_trace`` raises ``UserError`` for an unreadable notes file."""

    def __init__(self) -> None:
        self.annotations: Annotations | None = None

    def for_trace(self, trace: Path | None) -> Annotations | None:
        """The notes of ``trace`` (None while there is no trace yet), read again only when the trace changes."""
        if trace is None:
            return None
        if self.annotations is None or self.annotations.path != notes_path(trace):
            self.annotations = None
            self.annotations = Annotations(trace)
        return self.annotations

    @property
    def turns(self) -> set[int]:
        return self.annotations.turns if self.annotations is not None else set()

    def next_noted(self, shown: dict[int, int], current: int) -> int | None:
        """The next noted turn after ``current`` among the turns ``shown`` (wrapping around, like search)."""
        noted = sorted(t for t in self.turns if t in shown)
        if not noted:
            return None
        later = bisect.bisect_right(noted, current)
        return noted[later] if later < len(noted) else noted[0]


__all__ = ["TraceNotes"]
