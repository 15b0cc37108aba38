"""The episode screen's debugger: its breakpoints, the marks they and the findings leave, jumps between marks.

A non-visual widget the screen composes. The marks come from one pass over the source's events in a worker (after
the index when there are breakpoints, else on the first request, so the first paint never waits for it); when they
are known it posts ``MarksReady``, and a jump posts ``GoTo`` with the timeline row to show. It reads where the
screen is through ``EpisodeView``; it never imports a screen (dialogs are the screen's to open).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from textual import work
from textual.message import Message
from textual.widget import Widget

from stripebench_tui.core.breakpoints import BreakHit
from stripebench_tui.core.playback import next_mark
from stripebench_tui.core.profile import TimeProfile
from stripebench_tui.tui.components.marks import Marks, scan
from stripebench_tui.tui.sources.episode_source import EpisodeSource

VERDICT, FINDING, HIT = "verdict", "finding", "hit"
_WHAT = {VERDICT: "changes a verdict", FINDING: "has a finding", HIT: "hits a breakpoint"}


class EpisodeView(Protocol):
    """Where the screen is: its turn numbers (timeline rows), the selected row, the turns where a verdict changed."""

    @property
    def turns(self) -> list[int] | None: ...

    @property
    def position(self) -> int | None: ...

    @property
    def verdict_turns(self) -> list[int]: ...


class Debugger(Widget):
    """Breakpoint expressions and the marks of the episode shown."""

    DEFAULT_CSS = "Debugger { display: none; }"

    class MarksReady(Message):
        """The marks of the episode are known (``marks.derived``: the detectors' findings the scan derived)."""

        def __init__(self, marks: Marks) -> None:
            super().__init__()
            self.marks = marks

    class GoTo(Message):
        """Show timeline row ``position`` (a jump found its mark)."""

        def __init__(self, position: int) -> None:
            super().__init__()
            self.position = position

    def __init__(self, source: EpisodeSource, view: EpisodeView, breakpoints: list[str] | None = None) -> None:
        super().__init__()
        self.source = source
        self.view = view
        self.exprs: list[str] = list(breakpoints or [])
        self.marks: Marks | None = None
        self._after_marks: list[Callable[[], None]] = []  # what waits for the scan (a jump, the time screen)

    # ----- marks -------------------------------------------------------------------------
    def index_ready(self) -> None:
        """The index is built: breakpoints need their hits before playback."""
        if self.exprs:
            self.rescan()

    def rescan(self) -> None:
        self.marks = None
        self._scan()

    @work(thread=True, exclusive=True, group="marks")
    def _scan(self) -> None:
        # Live, the episode's findings runner publishes its findings: none are derived here.
        marks = scan(self.source.iter_events(), self.exprs, derive=not self.source.live, header=self.source.header)
        self.app.call_from_thread(self._marks_ready, marks)

    def _marks_ready(self, marks: Marks) -> None:
        self.marks = marks
        self.post_message(self.MarksReady(marks))
        waiting, self._after_marks = self._after_marks, []
        for then in waiting:
            then()

    def with_marks(self, then: Callable[[], None], fresh: bool = False) -> None:
        """Run ``then`` once the marks are known (``fresh``: scan again first, e.g. live)."""
        if self.marks is not None and not fresh:
            then()
            return
        self._after_marks.append(then)
        self.rescan()

    @property
    def profile(self) -> TimeProfile:
        """Where the time went (empty until the marks are known)."""
        return self.marks.profile if self.marks is not None else TimeProfile()

    # ----- jumps -------------------------------------------------------------------------
    def _mark_turns(self, kind: str) -> list[int]:
        if kind == VERDICT:
            return self.view.verdict_turns
        if self.marks is None:
            return []
        return self.marks.findings if kind == FINDING else self.marks.hit_turns

    def jump(self, kind: str, forward: bool, scanned: bool = False) -> None:
        """Go to the next (or previous) turn with a verdict change, a finding or a breakpoint hit."""
        turns, position = self.view.turns, self.view.position
        if not turns or position is None:
            return
        live = self.source.live
        if kind != VERDICT and (self.marks is None or (live and not scanned)):
            # Live, findings and hits keep coming: scan what is there now.
            self.with_marks(lambda: self.jump(kind, forward, True), fresh=live)
            return
        positions = {n: i for i, n in enumerate(turns)}
        target = next_mark([t for t in self._mark_turns(kind) if t in positions], turns[position], forward)
        if target is None:
            self.notify(f"No {'later' if forward else 'earlier'} turn {_WHAT[kind]}.", title="Jump")
            return
        self.post_message(self.GoTo(positions[target]))

    def hit_at(self, turn: int) -> BreakHit | None:
        """One of this screen's breakpoints that hits ``turn``, once the marks are known.

        Hits recorded by a live run are places to jump to (``}``), not stops: playback would otherwise
        stop or not depending on whether the marks had been read yet.
        """
        if self.marks is None:
            return None
        return next((h for h in self.marks.hits if h.turn == turn), None)

    # ----- the breakpoints dialog's calls ------------------------------------------------------
    def listing(self) -> list[tuple[int, str]]:
        return list(enumerate(self.exprs, 1))

    def add(self, expr: str) -> None:
        self.exprs.append(expr)
        self.rescan()

    def remove_breakpoint(self, number: int) -> None:
        if 0 < number <= len(self.exprs):
            self.exprs.pop(number - 1)
            self.rescan()


__all__ = ["FINDING", "HIT", "VERDICT", "Debugger", "EpisodeView"]
