"""*Retry without idempotency*: the same create sent twice within ``RETRY_TURNS`` turns with nothing tying the
attempts together, so a retry can make a second object.

Two POSTs to a collection with the same parameters (order aside) fire it when neither carries an
``Idempotency-Key``, or when each carries its own key and Stripe made two objects (duplicates afterwards). The
same key twice is a safe retry: Stripe replays the first answer. Graders' requests are left out. A create whose
answer the sender went on to use (a later request names the object it made, e.g. an invoice finalized or a
PaymentMethod attached) before sending the same parameters again was received: the second is another order, not
a retry (a migration making two invoices for one customer, a purchase route making a PaymentMethod per purchase).
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
        self.made: dict[str, tuple[str, str]] = {}  # object id a remembered create made -> that create's key
        self.used: set[int] = set()  # seqs of remembered creates whose answer a later request used

    def feed(self, event: Event) -> list[Finding] | None:
        assert isinstance(event, StripeRequest)
        if event.source == "grader":
            return None
        if not is_create(event.method, event.path):
            self._note_uses(event)
            return None
        self._note_uses(event)
        key = (event.path, "&".join(sorted(event.request_body.split("&"))))
        first = self.last.pop(key, None)
        answered = first is not None and first.seq in self.used
        if first is not None:
            self.used.discard(first.seq)
            if first.object_ids and self.made.get(first.object_ids[-1]) == key:
                del self.made[first.object_ids[-1]]
        self.last[key] = event  # at the end: ``last`` stays in the order creates were last sent
        if event.status < 300 and event.object_ids:
            self.made[event.object_ids[-1]] = key
        self._forget_before(event.turn)
        if first is None or answered or key in self.fired or event.turn - first.turn > RETRY_TURNS:
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

    def _note_uses(self, event: StripeRequest) -> None:
        """Mark the remembered creates whose objects ``event`` names (in its path or parameters) as answered."""
        if not self.made:
            return
        named = [i for i in self.made if i in event.object_ids or i in event.request_body]
        for made_id in named:
            key = self.made.pop(made_id)
            create = self.last.get(key)
            if create is not None and made_id in create.object_ids and create.seq != event.seq:
                self.used.add(create.seq)

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
            _, dropped = last.popitem(last=False)
            self.used.discard(dropped.seq)
            if dropped.object_ids and self.made.get(dropped.object_ids[-1]) == oldest:
                del self.made[dropped.object_ids[-1]]

    def finish(self, reason: str) -> None:
        return None


__all__ = ["NAME", "RETRY_TURNS", "RetryWithoutIdempotency"]
