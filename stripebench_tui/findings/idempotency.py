"""*Retry without idempotency*: two POSTs that create the same kind of object with the same parameters and no
``Idempotency-Key`` within ``RETRY_TURNS`` turns of each other (the second is a retry that can make a duplicate;
with a key Stripe would replay the first).

Graders' requests are left out; the parameters are compared as sent (order aside).
"""

from __future__ import annotations

from stripebench_tui.core.events import Event, Finding, StripeRequest
from stripebench_tui.findings.base import finding, is_create

NAME = "retry-without-idempotency"
RETRY_TURNS = 1  # a retry comes in the same turn or the next; the same order placed much later is a new order


class RetryWithoutIdempotency:
    """See the module docstring."""

    name = NAME
    wants = (StripeRequest.type,)

    def __init__(self) -> None:
        self.first: dict[tuple[str, str], StripeRequest] = {}
        self.fired: set[tuple[str, str]] = set()

    def feed(self, event: Event) -> list[Finding] | None:
        assert isinstance(event, StripeRequest)
        if event.source == "grader" or event.idempotency_key or not is_create(event.method, event.path):
            return None
        key = (event.path, "&".join(sorted(event.request_body.split("&"))))
        first = self.first.get(key)
        self.first[key] = event
        if first is None or key in self.fired or event.turn - first.turn > RETRY_TURNS:
            return None
        self.fired.add(key)
        what = "after it failed" if first.status >= 400 else "again"
        return [finding(NAME, f"POST {event.path} sent {what} with the same parameters and no Idempotency-Key",
                        [{"request_id": first.request_id}, {"request_id": event.request_id}],
                        turn=event.turn, seq=event.seq)]

    def finish(self, reason: str) -> None:
        return None


__all__ = ["NAME", "RetryWithoutIdempotency"]
