"""*Bad signature accepted*: the app answered 2xx to a webhook delivery whose signature was wrong or missing.

Stripe signs every delivery (``Stripe-Signature``). An endpoint that acknowledges one it cannot verify either does
not verify at all (a forged event is acted on) or swallows the verification error (a real event is dropped, and
being acknowledged, never retried). Only the sender knows a signature is bad, so this reads the ``webhook_delivery``
events that say so: a grader's test deliveries signed with another secret, over another body than the one sent, or
not signed (``grading.webhooks``). Stripe's own deliveries are signed properly and never fire it; nor does a bad
delivery the app refused (4xx) or never answered. One finding per endpoint and kind of bad signature.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from stripebench_tui.core.events import SIGNED, UNSIGNED, Event, Finding, WebhookDelivery
from stripebench_tui.findings.base import ERROR, finding

NAME = "bad-signature-accepted"


class BadSignatureAccepted:
    """See the module docstring."""

    name = NAME
    wants = (WebhookDelivery.type,)

    def __init__(self) -> None:
        self.fired: set[tuple[str, str]] = set()  # (endpoint path, signature kind)

    def feed(self, event: Event) -> list[Finding] | None:
        assert isinstance(event, WebhookDelivery)
        if event.signature == SIGNED or not 200 <= event.status < 300:
            return None
        path = urlsplit(event.url).path or event.url
        if (path, event.signature) in self.fired:
            return None
        self.fired.add((path, event.signature))
        how = "an unsigned" if event.signature == UNSIGNED else "a wrongly signed"
        what = " ".join(x for x in (event.event_type, event.event_id) if x) or "event"
        return [finding(NAME, f"{path} answered {event.status} to {how} webhook delivery ({what}, sent by "
                              f"{event.sender or 'unknown'}): it should refuse what it cannot verify with 400",
                        [{"seq": event.seq}], turn=event.turn, seq=event.seq, severity=ERROR)]

    def finish(self, reason: str) -> None:
        return None


__all__ = ["BadSignatureAccepted", "NAME"]
