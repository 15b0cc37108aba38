"""Small graders and bus helpers shared by the grading tests."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from stripebench_tui.core.bus import EventBus
from stripebench_tui.core.events import Event, GraderVerdict, StripeObject
from stripebench_tui.grading import Candidates, Criterion, Grader, expect, failed, passed, pending


def session(object_id: str, **data: Any) -> StripeObject:
    """A checkout.session as a watcher would publish it."""
    return StripeObject(object_id=object_id, object_type="checkout.session", data={"id": object_id, **data},
                        event_id=f"evt_{object_id}", request_id=f"req_{object_id}")


def mode_is_payment(ctx, view):
    return expect("mode", "payment", (view.candidate_data or {}).get("mode"), session=view.candidate)


def is_paid(ctx, view):
    status = (view.candidate_data or {}).get("payment_status")
    if status == "paid":
        return passed("paid", session=view.candidate)
    return (failed if view.final else pending)(f"payment_status is {status!r}", session=view.candidate)


def checkout_grader(**extra: Any) -> Grader:
    """mode (weight 1) and paid (weight 2) per checkout.session candidate."""
    return Grader(
        (
            Criterion("mode", 1, "The session is a one-time payment.", mode_is_payment, on=("checkout.session",)),
            Criterion("paid", 2, "The session is paid.", is_paid, on=("checkout.session",)),
        ),
        description="A paid one-time Checkout Session.",
        candidates=Candidates("checkout.session", **extra),
    )


class Verdicts:
    """A bus subscriber keeping grader verdicts (and every event) with the wall time each arrived."""

    def __init__(self, bus: EventBus) -> None:
        self.events: list[Event] = []
        self.arrived: dict[int, float] = {}
        bus.subscribe(self, name="test-verdicts")

    def __call__(self, event: Event) -> None:
        self.arrived[event.seq] = time.perf_counter()
        self.events.append(event)

    @property
    def verdicts(self) -> list[GraderVerdict]:
        return [e for e in self.events if isinstance(e, GraderVerdict)]

    def latest(self, criterion: str) -> GraderVerdict:
        return [v for v in self.verdicts if v.criterion == criterion][-1]

    async def wait_for(self, predicate, timeout: float = 10.0) -> GraderVerdict:
        """The first verdict matching ``predicate`` (waiting for it)."""
        deadline = time.monotonic() + timeout
        while True:
            for v in self.verdicts:
                if predicate(v):
                    return v
            if time.monotonic() > deadline:
                raise AssertionError(f"no matching verdict; got {[(v.criterion, v.status, v.trigger) for v in self.verdicts]}")
            await asyncio.sleep(0.001)
