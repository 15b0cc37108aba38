"""*Webhook not idempotent*: the same Stripe event, delivered again, did its work again.

Stripe delivers at least once: a retry, a redelivery or a duplicate carries the same event id, and the endpoint
must take it without acting twice. A ``webhook_delivery`` whose sender measured what it changed (``rows_added``: a
grader's delivery to its copy of the app, ``grading.webhooks``) fires this when an earlier delivery of the same event
added rows and this one adds rows again to every table that one did: the work done twice (the order fulfilled twice,
a second parcel, a second credit). A redelivery that only adds to some of them, such as an app that logs every
delivery it gets and fulfils once, is not counted (precise rather than complete). The answers do not matter (an app that
fulfils and then fails with a 500 is retried and fulfils again). Only properly signed deliveries count (acting on a
forged one is ``bad-signature-accepted``'s); deliveries nobody measured (Stripe's own, to the running app) never fire
it. One finding per event.
"""

from __future__ import annotations

from stripebench_tui.core.events import SIGNED, Event, Finding, WebhookDelivery
from stripebench_tui.findings.base import ERROR, finding

NAME = "webhook-not-idempotent"


class WebhookNotIdempotent:
    """See the module docstring."""

    name = NAME
    wants = (WebhookDelivery.type,)

    def __init__(self) -> None:
        self.acted: dict[str, tuple[WebhookDelivery, set[str]]] = {}  # event id -> its first delivery that added rows
        self.fired: set[str] = set()

    def feed(self, event: Event) -> list[Finding] | None:
        assert isinstance(event, WebhookDelivery)
        if event.signature != SIGNED or not event.event_id or not event.rows_added:
            return None
        tables = {table for table, added in event.rows_added.items() if added > 0}
        if not tables:
            return None
        first = self.acted.get(event.event_id)
        if first is None:
            self.acted[event.event_id] = (event, tables)
            return None
        if not tables >= first[1] or event.event_id in self.fired:
            return None
        again = sorted(first[1])
        self.fired.add(event.event_id)
        rows = ", ".join(f"{table} +{event.rows_added[table]}" for table in again)
        return [finding(NAME, f"{event.event_type or 'event'} {event.event_id} was acted on again when delivered "
                              f"again ({rows}); a redelivered event must change nothing",
                        [{"seq": first[0].seq}, {"seq": event.seq}], turn=event.turn, seq=event.seq, severity=ERROR)]

    def finish(self, reason: str) -> None:
        return None


__all__ = ["NAME", "WebhookNotIdempotent"]
