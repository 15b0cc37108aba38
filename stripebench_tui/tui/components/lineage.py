"""The shown episode's family (``formats.lineage``), its recorded bisect (``formats.bisect_record``) and whether it
ended: read once in a worker after the screen opens, posted as ``LineageReader.Ready`` for the screen to act on
(the fork tree's key, the bisect mark on the timeline, the offer to resume). Never imports a screen."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from textual import work
from textual.message import Message
from textual.widget import Widget

from stripebench_tui.core.trace import TraceError
from stripebench_tui.formats.bisect_record import BisectRecord, read_bisect
from stripebench_tui.formats.lineage import Lineage, read_lineage


@dataclass(frozen=True)
class Family:
    """What the reader found for one trace."""

    trace_path: Path
    lineage: Lineage | None  # None: the trace could not be read as ours (an ATIF import, a file gone)
    bisect: BisectRecord | None
    ended: bool  # the trace has its episode_end event

    @property
    def forks(self) -> int:
        return self.lineage.forks if self.lineage is not None else 0


class LineageReader(Widget):
    """Reads the family of a recorded trace once (``read``); ``family`` holds it afterwards."""

    DEFAULT_CSS = "LineageReader { display: none; }"

    class Ready(Message):
        """The family of the shown trace is known."""

        def __init__(self, family: Family) -> None:
            super().__init__()
            self.family = family

    def __init__(self) -> None:
        super().__init__()
        self.family: Family | None = None

    def read(self, trace_path: Path) -> None:
        """Read ``trace_path``'s family in a worker (forks are found by opening the episodes around it)."""
        self._read(trace_path)

    @work(thread=True, exclusive=True, group="lineage")
    def _read(self, trace_path: Path) -> None:
        try:
            lineage: Lineage | None = read_lineage(trace_path)
        except (TraceError, OSError):
            lineage = None
        # (a trace that is not ours is not offered a resume: nothing says how it ended)
        ended = lineage.root.ended if lineage is not None else True
        family = Family(trace_path, lineage, read_bisect(trace_path), ended)
        self.app.call_from_thread(self._ready, family)

    def _ready(self, family: Family) -> None:
        self.family = family
        self.post_message(self.Ready(family))


__all__ = ["Family", "LineageReader"]
