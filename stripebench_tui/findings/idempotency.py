"""*Retry without idempotency*: the same create sent twice within ``RETRY_TURNS`` turns with nothing tying the
attempts together, so a retry can make a second object.

Two POSTs to a collection with the same parameters (order aside) fire it when neither carries an
``Idempotency-Key``, or when each carries its own key and Stripe made two objects (duplicates afterwards). The
same key twice is a safe retry: Stripe replays the first answer. Graders' requests are left out.
"""

from __future__ import annotations

from collections import OrderedDict

from stripebench_tui.core.events import Event, Finding, StripeRequest
from stripebench_tui.findings.base import finding, is_create

NAME = "retry-without-idempotency"
RETRY_TURNS = 1  # a retry comes in the same turn or the next; the same order placed much later is a new order


class RetryWithoutIdempotency:
    """See the module docstring."""

    name = NAME
    wants = (StripeRequest.type,)

    def __init__(self) -> None:
        # OrderedDict: dropping the oldest is O(1) (a dict would skip its deleted slots on each look)
        self.last: OrderedDict[tuple[str, str], StripeRequest] = OrderedDict()
        self.fired: set[tuple[str, str]] = set()

    def feed(self, event: Event) -> list[Finding] | None:
        assert isinstance(event, StripeRequest)
        if event.source == "grader" or not is_create(event.method, event.path):
            return None
        key = (event.path, "&".join(sorted(event.request_body.split("&"))))
        first = self.last.pop(key, None)
        self.last[key] = event  # at the end: ``last`` stays in the order creates were last sent
        self._forget_before(event.turn)
        if first is None or key in self.fired or event.turn - first.turn > RETRY_TURNS:
            return None
        if not first.idempotency_key and not event.idempotency_key:
            what = "after it failed" if first.status >= 400 else "again"
            message = f"POST {event.path} sent {what} with the same parameters and no Idempotency-Key"
        elif (first.idempotency_key != event.idempotency_key and first.status < 300 and event.status < 300
              and first.object_ids[:1] != event.object_ids[:1]):
            message = (f"POST {event.path} sent twice with the same parameters under different Idempotency-Keys: "
                       f"two objects ({', '.join(first.object_ids[:1] + event.object_ids[:1])})")
        else:
            return None
        self.fired.add(key)
        return [finding(NAME, message, [{"request_id": first.request_id}, {"request_id": event.request_id}],
                        turn=event.turn, seq=event.seq)]

    def _forget_before(self, turn: int) -> None:
        """Drop the creates no later one can retry: sent more than ``RETRY_TURNS`` before ``turn``.

        Turns only go forward in a trace (the writer's order), so this keeps memory to the last turns' creates
        over an episode of any length without changing what fires.
        """
        last = self.last
        while last:
            oldest = next(iter(last))
            if turn - last[oldest].turn <= RETRY_TURNS:
                return
            last.popitem(last=False)

    def finish(self, reason: str) -> None:
        return None


__all__ = ["NAME", "RETRY_TURNS", "RetryWithoutIdempotency"]
