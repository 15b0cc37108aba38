"""Webhook deliveries a grader sends to the app, signed as Stripe signs them (or badly, on purpose), and recorded.

``WebhookSender.deliver`` POSTs an event's JSON to the app's endpoint with a ``Stripe-Signature`` header computed
like Stripe's (``SIGNED``: HMAC-SHA256 of ``"<t>.<body>"`` with the endpoint's secret), or a test's bad one: signed
with another secret (``WRONG_SECRET``), not signed at all (``UNSIGNED``), or signed over another body than the one
sent (``signed_body``: a tampered delivery). Each delivery becomes a ``webhook_delivery`` event through the grading
context's ``on_delivery`` (the episode's trace): how it was signed, the app's answer and, given a ``measure`` (such
as ``AppCopy.row_counts``), the rows the delivery added to the app's database. The findings detectors judge the
app's webhook handling from those events alone (``findings.webhook_signature``, ``findings.webhook_idempotency``).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import sqlite3
import time
from collections.abc import Callable

import httpx

from stripebench_tui.core.events import BADLY_SIGNED, SIGNED, UNSIGNED, WebhookDelivery

# How to sign a delivery: with the endpoint's secret (SIGNED), another one, or not at all (UNSIGNED: no header).
WRONG_SECRET = "wrong-secret"
SIGNINGS = (SIGNED, WRONG_SECRET, UNSIGNED)
STRIPE_USER_AGENT = "Stripe/1.0 (+https://stripe.com/docs/webhooks)"
ANSWER_CAP = 2000  # characters of the app's answer kept in the event


def sign(payload: str, secret: str, timestamp: int | None = None) -> str:
    """A ``Stripe-Signature`` header for ``payload``, as Stripe computes it (HMAC-SHA256 of ``t.payload``)."""
    t = int(time.time()) if timestamp is None else timestamp
    mac = hmac.new(secret.encode(), f"{t}.{payload}".encode(), hashlib.sha256).hexdigest()
    return f"t={t},v1={mac}"


def event_of(body: str) -> tuple[str, str]:
    """The event id and type a delivery's body names ("" for a body that is not an event's JSON)."""
    try:
        event = json.loads(body)
    except ValueError:
        return "", ""
    if not isinstance(event, dict):
        return "", ""
    return str(event.get("id") or ""), str(event.get("type") or "")


class WebhookSender:
    """Delivers webhook events to ``path`` of the app behind ``http``, signed with ``secret``; see the module doc."""

    def __init__(self, http: httpx.Client, path: str, secret: str, *,
                 record: Callable[[WebhookDelivery], None] | None = None,
                 measure: Callable[[], dict[str, int]] | None = None) -> None:
        self.http, self.path, self.secret = http, path, secret
        self.record = record
        self.measure = measure

    def deliver(self, body: str, *, signing: str = SIGNED, signed_body: str | None = None,
                timestamp: int | None = None) -> httpx.Response:
        """POST ``body``; ``signing`` says with which secret (or none), ``signed_body`` what the signature covers
        (default ``body``). Raises httpx's errors after recording them (no answer: status 0)."""
        if signing not in SIGNINGS:
            raise ValueError(f"unknown signing {signing!r}; choose one of {', '.join(SIGNINGS)}")
        headers = {"Content-Type": "application/json; charset=utf-8", "User-Agent": STRIPE_USER_AGENT}
        covered = body if signed_body is None else signed_body
        if signing != UNSIGNED:
            secret = self.secret if signing == SIGNED else "whsec_" + secrets.token_hex(16)
            headers["Stripe-Signature"] = sign(covered, secret, timestamp)
        kind = UNSIGNED if signing == UNSIGNED else SIGNED if signing == SIGNED and covered == body else BADLY_SIGNED
        before = self._rows()
        event_id, event_type = event_of(body)
        delivery = WebhookDelivery(event_id=event_id, event_type=event_type, url=str(self.http.base_url.join(self.path)),
                                   sender="grader", signature=kind)
        started = time.monotonic()
        try:
            response = self.http.post(self.path, content=body.encode(), headers=headers)
        except httpx.HTTPError as exc:
            delivery.error = f"{type(exc).__name__}: {exc}"
            delivery.latency = round(time.monotonic() - started, 6)
            self._record(delivery)
            raise
        delivery.latency = round(time.monotonic() - started, 6)
        delivery.status, delivery.response_body = response.status_code, response.text[:ANSWER_CAP]
        after = self._rows()
        if before is not None and after is not None:
            delivery.rows_added = {t: n - before.get(t, 0) for t, n in after.items() if n != before.get(t, 0)}
        self._record(delivery)
        return response

    def _rows(self) -> dict[str, int] | None:
        if self.measure is None:
            return None
        try:
            return self.measure()
        except (sqlite3.Error, OSError):  # the app's database is mid-change or gone: this delivery is not measured
            return None

    def _record(self, delivery: WebhookDelivery) -> None:
        if self.record is not None:
            self.record(delivery)


__all__ = ["SIGNINGS", "WRONG_SECRET", "WebhookSender", "event_of", "sign"]
