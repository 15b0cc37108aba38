"""Live grading: re-check criteria as Stripe objects appear and at turn ends; publish verdicts that changed.

Wiring (the runtime does this)::

    live = LiveGrading(grader, ctx)
    live.attach(bus)                                  # before the agent starts
    driver.turn_end_hooks.append(live.turn_end_hook)
    driver.final_hooks.append(live.final_hook)        # returns the FinalScore for episode_end

The bus handler only records the object and queues work, so delivery is never
held up; one worker task runs the checks (synchronous ones in threads) and
publishes a ``grader_verdict`` only when a criterion's status or evidence changed.
Work queued while a batch runs is merged into the next batch, so a burst of
objects costs one round of checks, not one per object.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

from stripebench_tui.core.bus import EventBus, Subscription
from stripebench_tui.core.driver import Driver, FinalScore
from stripebench_tui.core.events import Event, GraderVerdict, StripeObject
from stripebench_tui.core.profile import GRADING, harness_part
from stripebench_tui.grading.context import GradingContext
from stripebench_tui.grading.criteria import Criterion, Grader
from stripebench_tui.grading.evaluate import Evaluator, Reported

log = logging.getLogger(__name__)

TURN_END_WAIT = 60.0  # seconds a turn end waits for its checks before the episode moves on
FINAL_WAIT = 30.0  # seconds the final grading waits for live checks still running before it abandons them


@dataclass
class _Job:
    criteria: list[Criterion]
    candidates: set[str] | None  # None: every current candidate
    trigger: str
    request_id: str = ""
    turn: int = 0
    done: asyncio.Future[None] | None = None


@dataclass
class _Published:
    status: str
    evidence: dict[str, Any] = field(default_factory=dict)


class LiveGrading:
    """One episode's live grader: see the module docstring for the wiring."""

    def __init__(self, grader: Grader, ctx: GradingContext) -> None:
        self.grader = grader
        self.ctx = ctx
        self.evaluator = Evaluator(grader, ctx)
        self.bus: EventBus | None = None
        self.published: dict[str, _Published] = {}
        self.final_report: dict[str, Reported] | None = None
        self._sub: Subscription | None = None
        self._jobs: list[_Job] = []
        self._wakeup: asyncio.Event | None = None
        self._worker: asyncio.Task[None] | None = None
        self._idle = asyncio.Event()
        self._idle.set()
        self._finishing = False  # set by the final hook and close(): live checks stop for good

    # ---- wiring ----

    def attach(self, bus: EventBus) -> LiveGrading:
        """Subscribe to ``bus`` and publish every criterion as pending (call inside the episode's event loop)."""
        self.bus = bus
        self._sub = bus.subscribe(self._on_event, name="live-grading")
        for name, r in self.evaluator.report().items():  # nothing checked yet: all pending, saying why
            evidence = r.evidence()
            self.published[name] = _Published(r.status, evidence)
            bus.publish_nowait(self._verdict(r.criterion, r.status, evidence, trigger="start"))
        return self

    @harness_part(GRADING)
    async def turn_end_hook(self, driver: Driver) -> None:
        """Driver turn-end hook: re-check every live criterion for every candidate and wait (bounded) for it."""
        live = [c for c in self.grader.criteria if not c.final_only]
        done = asyncio.get_running_loop().create_future()
        self._queue(_Job(live, None, "turn_end", turn=driver.turn, done=done))
        try:
            await asyncio.wait_for(asyncio.shield(done), TURN_END_WAIT)
        except TimeoutError:
            log.warning("turn-end grading still running after %ss; moving on", TURN_END_WAIT)

    @harness_part(GRADING)
    async def final_hook(self, driver: Driver | None = None) -> FinalScore:
        """Driver final hook: check everything (final), publish every criterion's final verdict, return the score."""
        self._finishing = True
        await self._stop_worker(FINAL_WAIT)
        report = await self.evaluator.final()
        self.final_report = report
        if self.bus is not None:
            turn = driver.turn if driver is not None else self.bus.turn
            for r in report.values():
                evidence = r.evidence()
                self.published[r.criterion.name] = _Published(r.status, evidence)
                await self.bus.publish(self._verdict(r.criterion, r.status, evidence, trigger="final", final=True), turn=turn)
        if self._sub is not None:
            self._sub.detach("episode graded")
        score = self.evaluator.score(report)
        return FinalScore(score=score, passed=score == 1.0)

    async def close(self) -> None:
        """Stop the worker and unsubscribe (the final hook does this too)."""
        self._finishing = True
        await self._stop_worker(0)
        if self._sub is not None:
            self._sub.detach("closed")

    async def idle(self) -> None:
        """Wait until every queued check has run and its verdicts are published."""
        await self._idle.wait()

    # ---- the bus side: record and queue, never wait ----

    def _on_event(self, ev: Event) -> None:
        if not isinstance(ev, StripeObject) or not ev.object_type:
            return
        new_candidate = self.evaluator.see(ev)
        watching = [c for c in self.grader.criteria if c.watches(ev.object_type)]
        trigger = ev.event_id or ev.object_id
        is_candidate = self.grader.candidates is not None and self.grader.candidates.object_type == ev.object_type
        if new_candidate:  # a new candidate gets every live per-candidate check, so it can be ranked fairly
            extra = [c for c in self.grader.criteria if not c.final_only and self.grader.per_candidate(c) and c not in watching]
            watching += extra
        if watching:
            self._queue(_Job(watching, {ev.object_id} if is_candidate else None, trigger, ev.request_id, ev.turn))

    def _queue(self, job: _Job) -> None:
        if self._finishing:  # a live verdict must never follow the final ones
            if job.done is not None and not job.done.done():
                job.done.set_result(None)
            return
        self._jobs.append(job)
        self._idle.clear()
        if self._worker is None or self._worker.done():
            self._wakeup = asyncio.Event()
            self._worker = asyncio.get_running_loop().create_task(self._work(), name="live-grading")
        assert self._wakeup is not None
        self._wakeup.set()

    # ---- the worker ----

    async def _work(self) -> None:
        assert self._wakeup is not None
        while True:
            await self._wakeup.wait()
            self._wakeup.clear()
            while self._jobs:
                jobs, self._jobs = self._jobs, []
                try:
                    await self._process(jobs)
                except asyncio.CancelledError:
                    raise
                except Exception:  # a framework bug must not end live grading for the episode
                    log.exception("live grading batch failed")
                finally:
                    for job in jobs:
                        if job.done is not None and not job.done.done():
                            job.done.set_result(None)
            if not self._jobs:
                self._idle.set()

    async def _process(self, jobs: list[_Job]) -> None:
        # The latest job that asked for a (criterion, candidate) pair is the one its verdict names.
        owner: dict[str, _Job] = {}
        pairs: dict[tuple[str, str | None], Criterion] = {}
        for job in jobs:
            for c, cand in self.evaluator.pairs(job.criteria, job.candidates):
                pairs[(c.name, cand)] = c
            for c in job.criteria:
                owner[c.name] = job
        trigger = jobs[-1].trigger
        await self.evaluator.run(((c, cand) for (_, cand), c in pairs.items()), final=False, trigger=trigger)
        await self._publish_changes(self.evaluator.report(), owner, jobs[-1])

    async def _publish_changes(self, report: dict[str, Reported], owner: dict[str, _Job], fallback: _Job) -> None:
        assert self.bus is not None
        for name, r in report.items():
            evidence = r.evidence()
            last = self.published.get(name)
            if last is not None and last.status == r.status and last.evidence == evidence:
                continue
            self.published[name] = _Published(r.status, evidence)
            # A verdict that changed because the best candidate changed is credited to the batch's last trigger.
            job = owner.get(name, fallback)
            verdict = self._verdict(r.criterion, r.status, evidence, trigger=job.trigger, request_id=job.request_id)
            await self.bus.publish(verdict, turn=job.turn)

    async def _stop_worker(self, wait: float) -> None:
        """Let queued checks finish (for at most ``wait`` seconds), then stop the worker."""
        if wait > 0:
            try:
                await asyncio.wait_for(self.idle(), wait)
            except TimeoutError:
                log.warning("live checks still running after %ss; abandoning them", wait)
        for job in self._jobs:
            if job.done is not None and not job.done.done():
                job.done.set_result(None)
        self._jobs.clear()
        self._idle.set()
        if self._worker is not None and not self._worker.done():
            self._worker.cancel()
            await asyncio.gather(self._worker, return_exceptions=True)
        self._worker = None

    def _verdict(self, c: Criterion, status: str, evidence: dict[str, Any], *, trigger: str,
                 request_id: str = "", final: bool = False) -> GraderVerdict:
        return GraderVerdict(criterion=c.name, status=status, weight=float(c.weight), description=c.description,
                             evidence=evidence, trigger=trigger, request_id=request_id, final=final)


__all__ = ["LiveGrading", "TURN_END_WAIT"]
