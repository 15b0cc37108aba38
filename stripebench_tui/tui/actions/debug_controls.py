"""The episode screen's debugger controls: breakpoints, jumps to marks, speed presets, where the time went.

A mixin of ``EpisodeScreen`` (and so of the live screen), kept apart so the screen stays small.
Marks (findings, breakpoint hits recorded live, hits of this screen's breakpoints) and the time
profile come from one pass over the source's events, in a worker: after the index when the
screen has breakpoints, else on the first request, so the first paint never waits for it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Iterable

from textual import work

from stripebench_tui.core.breakpoints import BREAK_HIT, BreakpointSet, BreakHit, hits_in
from stripebench_tui.core.events import Event, Finding, Header, Operator
from stripebench_tui.core.playback import MAX, next_mark, speed_label
from stripebench_tui.core.profile import Profiler, TimeProfile
from stripebench_tui.findings import with_derived_findings


@dataclass
class Marks:
    """Turns worth jumping to, and the time profile, from one pass over the events."""

    findings: list[int] = field(default_factory=list)
    recorded_hits: list[int] = field(default_factory=list)  # break_hit operator events (a live run's)
    hits: list[BreakHit] = field(default_factory=list)  # this screen's breakpoints over the recording
    profile: TimeProfile = field(default_factory=TimeProfile)
    derived: list[Finding] | None = None  # the detectors' findings, when the scan derived them (a recording without)

    @property
    def hit_turns(self) -> list[int]:
        return sorted({h.turn for h in self.hits} | set(self.recorded_hits))


def scan(events: Iterable[Event], exprs: list[str], derive: bool = False, header: Header | None = None) -> Marks:
    """The marks of ``events`` (an iterable) for the breakpoint expressions ``exprs``.

    ``derive`` (a recording): a trace without findings of its own gets the detectors' findings as it is scanned,
    so ``>`` and ``finding`` breakpoints reach the ones shown as ⚐ (``findings.with_derived_findings``).
    """
    marks, profiler, recorded = Marks(), Profiler(), list(events)
    events = with_derived_findings(recorded, header) if derive else recorded
    if derive and not any(isinstance(ev, Finding) for ev in recorded):  # the findings are the detectors'
        marks.derived = [ev for ev in events if isinstance(ev, Finding)]
    for ev in recorded:
        profiler.feed(ev)  # (a derived finding has no time of its own: it stays out of the profile)
    for ev in events:
        if isinstance(ev, Finding):
            marks.findings.append(ev.turn)
        elif isinstance(ev, Operator) and ev.action == BREAK_HIT:
            marks.recorded_hits.append(ev.turn)
    if exprs:
        marks.hits = hits_in(events, BreakpointSet.from_exprs(exprs))
    marks.profile = profiler.profile
    return marks


class DebugControls:
    """Mixin: needs the screen's ``source``, ``turns``, ``position``, ``turn``, ``playback``, ``select`` and ``_go``."""

    break_exprs: list[str]
    marks: Marks | None = None

    def init_debug(self, breakpoints: list[str] | None) -> None:
        self.break_exprs = list(breakpoints or [])
        self.marks = None
        self._after_marks: list[Callable[[], None]] = []  # what waits for the scan (a jump, the time screen)

    # ----- marks -------------------------------------------------------------------------
    def debug_index_ready(self) -> None:
        """Called once the index is built: breakpoints need their hits before playback."""
        if self.break_exprs:
            self.rescan()

    def rescan(self) -> None:
        self.marks = None
        self.scan_marks()

    @work(thread=True, exclusive=True, group="marks")
    def scan_marks(self) -> None:
        recorded = not getattr(self.source, "live", False)  # type: ignore[attr-defined]
        # Live, the episode's findings runner publishes its findings: none are derived here.
        marks = scan(self.source.iter_events(), self.break_exprs, derive=recorded,  # type: ignore[attr-defined]
                     header=self.source.header)  # type: ignore[attr-defined]
        self.app.call_from_thread(self._marks_ready, marks)  # type: ignore[attr-defined]

    def _marks_ready(self, marks: Marks) -> None:
        self.marks = marks
        if marks.derived is not None:
            self.marks_derived(marks.derived)
        waiting, self._after_marks = self._after_marks, []
        for then in waiting:
            then()

    def marks_derived(self, found: list[Finding]) -> None:
        """The scan ran the detectors over a recording without findings (a screen that shows them overrides)."""

    def with_marks(self, then: Callable[[], None], fresh: bool = False) -> None:
        """Run ``then`` once the marks are known (``fresh``: scan again first, e.g. live)."""
        if self.marks is not None and not fresh:
            then()
            return
        self._after_marks.append(then)
        self.rescan()

    def _mark_turns(self, kind: str) -> list[int]:
        if kind == "verdict":
            return list(getattr(self, "_verdict_turns", None) or [])
        assert self.marks is not None
        return self.marks.findings if kind == "finding" else self.marks.hit_turns

    def jump(self, kind: str, forward: bool, scanned: bool = False) -> None:
        """Go to the next (or previous) turn with a verdict change, a finding or a breakpoint hit."""
        turns, position = self.turns, self.position  # type: ignore[attr-defined]
        if not turns or position is None:
            return
        live = bool(getattr(self.source, "live", False))  # type: ignore[attr-defined]
        if kind != "verdict" and (self.marks is None or (live and not scanned)):
            # Live, findings and hits keep coming: scan what is there now.
            self.with_marks(lambda: self.jump(kind, forward, True), fresh=live)
            return
        positions = {n: i for i, n in enumerate(turns)}
        target = next_mark([t for t in self._mark_turns(kind) if t in positions], turns[position], forward)
        if target is None:
            what = {"verdict": "changes a verdict", "finding": "has a finding", "hit": "hits a breakpoint"}[kind]
            self.notify(f"No {'later' if forward else 'earlier'} turn {what}.", title="Jump")  # type: ignore[attr-defined]
            return
        self._go(positions[target])  # type: ignore[attr-defined]

    def action_previous_verdict(self) -> None:
        self.jump("verdict", False)

    def action_next_finding(self) -> None:
        self.jump("finding", True)

    def action_previous_finding(self) -> None:
        self.jump("finding", False)

    def action_next_hit(self) -> None:
        self.jump("hit", True)

    def action_previous_hit(self) -> None:
        self.jump("hit", False)

    # ----- playback -----------------------------------------------------------------------
    def set_speed(self, speed: float) -> None:
        self.playback.set_speed(speed)  # type: ignore[attr-defined]
        self._schedule_next()  # type: ignore[attr-defined]
        self.notify(f"Playback speed {speed_label(speed)}.", title="Speed", timeout=2)  # type: ignore[attr-defined]
        self.refresh_status()  # type: ignore[attr-defined]

    def action_speed_1(self) -> None:
        self.set_speed(1.0)

    def action_speed_2(self) -> None:
        self.set_speed(2.0)

    def action_speed_8(self) -> None:
        self.set_speed(8.0)

    def action_speed_max(self) -> None:
        self.set_speed(MAX)

    def stop_at_breakpoint(self) -> bool:
        """After playback moved to a turn: pause there if one of this screen's breakpoints hit it; whether it did.

        Hits recorded by a live run are places to jump to (``}``), not stops: playback would otherwise
        stop or not depending on whether the marks had been read yet.
        """
        if self.marks is None or self.turn is None:  # type: ignore[attr-defined]
            return False
        number = self.turn.index  # type: ignore[attr-defined]
        hit = next((h for h in self.marks.hits if h.turn == number), None)
        if hit is None:
            return False
        self.playback.pause()  # type: ignore[attr-defined]
        self.note = f"stopped: {hit.reason}"  # type: ignore[attr-defined]
        self.refresh_status()  # type: ignore[attr-defined]
        return True

    # ----- dialogs ------------------------------------------------------------------------
    def action_breakpoints(self) -> None:
        from stripebench_tui.tui.screens.breakpoints import BreakpointScreen

        def listing() -> list[tuple[int, str]]:
            return list(enumerate(self.break_exprs, 1))

        def add(expr: str) -> None:
            self.break_exprs.append(expr)
            self.rescan()

        def remove(number: int) -> None:
            if 0 < number <= len(self.break_exprs):
                self.break_exprs.pop(number - 1)
                self.rescan()

        self.app.push_screen(BreakpointScreen(listing, add, remove, live=False))  # type: ignore[attr-defined]

    def action_where_time_went(self) -> None:
        from stripebench_tui.tui.screens.time_screen import TimeScreen

        live = bool(getattr(self.source, "live", False))  # type: ignore[attr-defined]
        self.with_marks(lambda: self.app.push_screen(TimeScreen(self.marks.profile)), fresh=live)  # type: ignore[attr-defined, union-attr]


def status_speed(speed: float) -> str:
    """How the status bar spells a speed (×2, ×max)."""
    return " ×max" if math.isinf(speed) else f" ×{speed:g}"


__all__ = ["DebugControls", "Marks", "scan", "status_speed"]
