"""grading.webhooks: a grader's deliveries are signed as Stripe signs them (or badly, on purpose) and recorded."""

from __future__ import annotations

import json

import httpx
import pytest
import stripe

from stripebench_tui.core.events import BADLY_SIGNED, SIGNED, UNSIGNED, WebhookDelivery
from stripebench_tui.grading.webhooks import WRONG_SECRET, WebhookSender, event_of

SECRET = "whsec_test_grader"
EVENT = json.dumps({"id": "evt_1", "object": "event", "type": "checkout.session.completed",
                    "data": {"object": {"id": "cs_test_1", "object": "checkout.session"}}})


class App:
    """An endpoint that verifies with the official SDK and writes a row per verified event (idempotent or not)."""

    def __init__(self, idempotent: bool) -> None:
        self.idempotent = idempotent
        self.rows: dict[str, int] = {"fulfillments": 0, "orders": 1}
        self.seen: set[str] = set()

    def handle(self, request: httpx.Request) -> httpx.Response:
        try:
            event = stripe.Webhook.construct_event(request.content.decode(), request.headers.get("stripe-signature", ""),
                                                   SECRET)
        except (ValueError, stripe.SignatureVerificationError):
            return httpx.Response(400, json={"error": "invalid signature"})
        if not (self.idempotent and event.id in self.seen):
            self.rows["fulfillments"] += 1
        self.seen.add(event.id)
        return httpx.Response(200, json={"received": True})


def sender(app: App, recorded: list[WebhookDelivery]) -> WebhookSender:
    http = httpx.Client(base_url="http://shop.test", transport=httpx.MockTransport(app.handle))
    return WebhookSender(http, "/webhooks/stripe", SECRET, record=recorded.append, measure=lambda: dict(app.rows))


@pytest.mark.parametrize("idempotent", [True, False])
def test_each_delivery_is_recorded_with_its_signing_the_answer_and_the_rows_it_added(idempotent):
    app, recorded = App(idempotent), []
    hooks = sender(app, recorded)
    answers = [hooks.deliver(EVENT, signing=WRONG_SECRET).status_code, hooks.deliver(EVENT, signing=UNSIGNED).status_code,
               hooks.deliver(EVENT.replace("cs_test_1", "cs_test_2"), signed_body=EVENT).status_code,
               hooks.deliver(EVENT).status_code, hooks.deliver(EVENT).status_code]
    assert answers == [400, 400, 400, 200, 200]
    assert [d.signature for d in recorded] == [BADLY_SIGNED, UNSIGNED, BADLY_SIGNED, SIGNED, SIGNED]
    assert [d.rows_added for d in recorded] == [{}, {}, {}, {"fulfillments": 1}, {} if idempotent else {"fulfillments": 1}]
    first = recorded[3]
    assert (first.event_id, first.event_type, first.url, first.sender, first.status) == (
        "evt_1", "checkout.session.completed", "http://shop.test/webhooks/stripe", "grader", 200)
    assert json.loads(first.response_body) == {"received": True} and first.latency is not None


def test_an_app_that_does_not_answer_is_recorded_as_status_0_and_the_error_raised():
    recorded: list[WebhookDelivery] = []

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    http = httpx.Client(base_url="http://shop.test", transport=httpx.MockTransport(refuse))
    with pytest.raises(httpx.ConnectError):
        WebhookSender(http, "/webhooks/stripe", SECRET, record=recorded.append).deliver(EVENT)
    [d] = recorded
    assert d.status == 0 and d.error == "ConnectError: connection refused" and d.rows_added is None


def test_without_a_recorder_or_a_measure_it_just_delivers_and_a_bad_signing_is_a_bug():
    app = App(idempotent=True)
    http = httpx.Client(base_url="http://shop.test", transport=httpx.MockTransport(app.handle))
    hooks = WebhookSender(http, "/webhooks/stripe", SECRET)
    assert hooks.deliver(EVENT, signing=SIGNED).status_code == 200 and app.rows["fulfillments"] == 1
    with pytest.raises(ValueError, match="unknown signing 'forged'"):
        hooks.deliver(EVENT, signing="forged")
    assert event_of("not json") == ("", "") and event_of("[1]") == ("", "") and event_of(EVENT) == (
        "evt_1", "checkout.session.completed")
