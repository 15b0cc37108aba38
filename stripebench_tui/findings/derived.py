"""A recorded episode's events with the findings it would have recorded: derived ones for a trace that has none.

A trace from before the detectors has no ``finding`` events, so a ``finding``
breakpoint (``core.breakpoints``) never matches it. ``with_derived_findings``
gives its events with what the detectors find now placed where a live run would
have published each one: right after the event that fired it, and the
end-of-episode ones before ``episode_end``. A trace with findings of its own is
given back as it is.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace

from stripebench_tui.core.events import EpisodeEnd, Event, Finding, Header
from stripebench_tui.findings.runner import FindingsRunner


def with_derived_findings(events: Iterable[Event], header: Header | None = None) -> list[Event]:
    """``events`` (a recorded episode, in order), with derived findings interleaved if it recorded none;
    ``header`` is the trace's (what the task asks, for the detectors that read it)."""
    events = list(events)
    if any(isinstance(ev, Finding) for ev in events):
        return events
    return list(interleave_derived(events, header))


def interleave_derived(events: Iterable[Event], header: Header | None = None) -> Iterator[Event]:
    """``events`` with what the detectors find placed where a live run would have published it, one event at a time
    (for a trace known to have recorded no findings: the caller checks)."""
    deriver = Deriver(header)
    for ev in events:
        yield from deriver.feed(ev)


class Deriver:
    """``interleave_derived`` one event at a time, for a pass that feeds other folds too (``replay --summary``).

    ``findings`` is then what ``runner.detect`` would give over the same events (and ``header``).
    """

    def __init__(self, header: Header | None = None) -> None:
        self.runner = FindingsRunner(header=header)

    @property
    def findings(self) -> list[Finding]:
        return self.runner.findings

    def feed(self, ev: Event) -> list[Event]:
        """The events the derived stream has for ``ev``: it, and after it (before an end) what it made fire."""
        runner = self.runner
        if runner.finished:
            return [ev]
        if isinstance(ev, Header):
            runner.feed(ev)  # what the task asks: read, never fires
            return [ev]
        if isinstance(ev, EpisodeEnd):
            return [*(replace(f, t=ev.t) for f in runner.finish(ev.reason)), ev]
        found = runner.feed(ev)  # usually nothing: the hot path of a big trace
        return [ev, *(replace(f, t=ev.t) for f in found)] if found else [ev]  # stamped when what fired them happened


__all__ = ["Deriver", "interleave_derived", "with_derived_findings"]
