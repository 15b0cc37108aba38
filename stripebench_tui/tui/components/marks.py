"""The turns worth jumping to in an episode — findings, breakpoint hits recorded live, hits of the screen's own
breakpoints — and its time profile, from one pass over its events (``scan``; the ``Debugger`` runs it in a worker)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from stripebench_tui.core.breakpoints import BREAK_HIT, BreakHit, BreakpointSet, hits_in
from stripebench_tui.core.events import Event, Finding, Header, Operator
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


__all__ = ["Marks", "scan"]
