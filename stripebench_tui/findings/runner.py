"""Running the detectors: over events one at a time (live, on the bus) or over a whole recorded trace.

Live, the runner is a bus subscriber and publishes each finding as it fires, stamped with the turn it marks;
its ``final_hook`` (the episode's last final hook, after final grading) waits until it has seen every event so
far, then asks each detector for its end-of-episode findings, since nothing may follow ``episode_end``.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import Any

from stripebench_tui.core.bus import EventBus
from stripebench_tui.core.driver import Driver
from stripebench_tui.core.events import EpisodeEnd, Event, Finding, Header
from stripebench_tui.core.profile import GRADING, harness_part
from stripebench_tui.errors import UserError
from stripebench_tui.findings.base import Detector

DETECTORS: dict[str, str] = {
    "400-as-success": "stripebench_tui.findings.status_400:Detector400",
    "unverified-finish": "stripebench_tui.findings.unverified:UnverifiedFinish",
    "lost-focus": "stripebench_tui.findings.lost_focus:LostFocus",
    "retry-without-idempotency": "stripebench_tui.findings.idempotency:RetryWithoutIdempotency",
    "scope-or-auth-error": "stripebench_tui.findings.auth:ScopeOrAuthError",
    "secret-exposure": "stripebench_tui.findings.secrets:SecretExposure",
    "bad-signature-accepted": "stripebench_tui.findings.webhook_signature:BadSignatureAccepted",
    "webhook-not-idempotent": "stripebench_tui.findings.webhook_idempotency:WebhookNotIdempotent",
    "unrestricted-key": "stripebench_tui.findings.restricted_key:UnrestrictedKey",
    "wrong-final-state": "stripebench_tui.findings.final_state:WrongFinalState",
}
_NONE: list[Finding] = []  # shared empty answer (callers must not change it)
DRAIN_TIMEOUT = 5.0  # seconds the final hook waits for the runner to catch up with the bus


def create_detectors(names: Iterable[str] | None = None) -> list[Detector]:
    """Fresh detectors, all of them or those named; UserError for an unknown name."""
    out = []
    for name in list(names) if names is not None else list(DETECTORS):
        target = DETECTORS.get(name)
        if target is None:
            raise UserError(f"unknown detector {name!r}; choose from {', '.join(DETECTORS)}")
        module, _, attr = target.partition(":")
        out.append(getattr(importlib.import_module(module), attr)())
    return out


class FindingsRunner:
    """Feeds events to detectors by type and collects (or publishes) their findings."""

    def __init__(self, detectors: list[Detector] | None = None, bus: EventBus | None = None,
                 header: Header | None = None) -> None:
        """``header``: the episode's trace header, given first to the detectors that want it (what the task asks)."""
        self.detectors = detectors if detectors is not None else create_detectors()
        self.bus = bus
        self.findings: list[Finding] = []
        self.finished = False
        self._by_type: dict[str, list[Any]] = {}  # event type -> the feed methods that want it
        for det in self.detectors:
            for kind in det.wants:
                self._by_type.setdefault(kind, []).append(det.feed)
        if header is not None:
            self.feed(header)

    @classmethod
    def live(cls, bus: EventBus, detectors: list[Detector] | None = None,
             header: Header | None = None) -> FindingsRunner:
        """A runner subscribed to ``bus`` that publishes its findings there (the bus never carries the header)."""
        runner = cls(detectors, bus, header)
        bus.subscribe(runner.feed, name="findings")
        return runner

    def feed(self, event: Event) -> list[Finding]:
        """Give ``event`` to the detectors that want its type; returns (and publishes) what fired."""
        wanted = self._by_type.get(event.type)
        if not wanted or self.finished:
            return _NONE
        out: list[Finding] | None = None
        for feed in wanted:  # the hot loop: most feeds return None
            got = feed(event)
            if got:
                out = [*out, *got] if out else list(got)
        if out is None:
            return _NONE
        self._emit(out)
        return out

    def finish(self, reason: str) -> list[Finding]:
        """The detectors' end-of-episode findings (once)."""
        if self.finished:
            return []
        self.finished = True
        out: list[Finding] = []
        for det in self.detectors:
            got = det.finish(reason)
            if got:
                out.extend(got)
        self._emit(out)
        return out

    def _emit(self, found: list[Finding]) -> None:
        self.findings.extend(found)
        if self.bus is not None:
            for f in found:
                self.bus.publish_nowait(f, turn=f.turn)

    @harness_part(GRADING)  # judging the episode, as the graders do
    async def final_hook(self, driver: Driver) -> None:
        """Driver final hook: catch up with the bus, then publish the end-of-episode findings."""
        if self.bus is not None:
            await self.bus.drain(timeout=DRAIN_TIMEOUT)
        self.finish(str(getattr(driver, "end_reason", "") or ""))


def detect(events: Iterable[Event], detectors: list[Detector] | None = None,
           header: Header | None = None) -> list[Finding]:
    """Every finding the detectors make over a recorded episode (end-of-episode ones at its ``episode_end``).

    ``header`` is the trace's (``Trace.iter_events`` leaves it out); a header among ``events`` is read as well.
    """
    runner = FindingsRunner(detectors, header=header)
    for event in events:
        if isinstance(event, EpisodeEnd):
            runner.finish(event.reason)
            break
        runner.feed(event)
    return runner.findings


def findings_of(events: list[Event], header: Header | None = None) -> list[Finding]:
    """The findings a trace recorded, or (a trace from before the detectors) what they find over it now."""
    recorded = [e for e in events if isinstance(e, Finding)]
    return recorded if recorded else detect(events, header=header)


__all__ = ["DETECTORS", "DRAIN_TIMEOUT", "FindingsRunner", "create_detectors", "detect", "findings_of"]
