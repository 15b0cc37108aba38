"""A recorded episode's events with the findings it would have recorded: derived ones for a trace that has none.

A trace from before the detectors has no ``finding`` events, so a ``finding``
breakpoint (``core.breakpoints``) never matches it. ``with_derived_findings``
gives its events with what the detectors find now placed where a live run would
have published each one: right after the event that fired it, and the
end-of-episode ones before ``episode_end``. A trace with findings of its own is
given back as it is.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterable, Iterator

from stripebench_tui.core.events import EpisodeEnd, Event, Finding, Header
from stripebench_tui.findings.runner import FindingsRunner


def with_derived_findings(events: Iterable[Event]) -> list[Event]:
    """``events`` (a recorded episode, in order), with derived findings interleaved if it recorded none."""
    events = list(events)
    if any(isinstance(ev, Finding) for ev in events):
        return events
    return list(interleave_derived(events))


def interleave_derived(events: Iterable[Event]) -> Iterator[Event]:
    """``events`` with what the detectors find placed where a live run would have published it, one event at a time
    (for a trace known to have recorded no findings: the caller checks)."""
    runner = FindingsRunner()
    for ev in events:
        if isinstance(ev, EpisodeEnd) and not runner.finished:
            yield from (replace(f, t=ev.t) for f in runner.finish(ev.reason))
        elif not isinstance(ev, Header) and not runner.finished:
            yield ev
            yield from (replace(f, t=ev.t) for f in runner.feed(ev))  # when the event that fired it happened
            continue
        yield ev


__all__ = ["interleave_derived", "with_derived_findings"]
