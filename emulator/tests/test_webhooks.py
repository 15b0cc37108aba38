"""Webhook endpoints and signed deliveries, verified with stripe-python's ``Webhook.construct_event``."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
import stripe


class Receiver:
    """A tiny HTTP server recording webhook POSTs; answers with ``statuses`` in turn (then 200)."""

    def __init__(self) -> None:
        self.received: list[tuple[dict[str, str], bytes]] = []
        self.statuses: list[int] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # http.server's naming
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                receiver.received.append(({k.lower(): v for k, v in self.headers.items()}, body))
                status = receiver.statuses.pop(0) if receiver.statuses else 200
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def wait_for(self, count: int, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while len(self.received) < count and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(self.received) >= count, f"got {len(self.received)} deliveries, wanted {count}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


def _settings(emulator, **values) -> None:
    httpx.post(f"{emulator.url}/_emulator/webhook_settings", json=values,
               headers=emulator.control_headers, timeout=5).raise_for_status()


def test_endpoint_crud_secret_only_on_create(stripe_client):
    ep = stripe_client.v1.webhook_endpoints.create(params={"url": "https://shop.test/hook",
                                                           "enabled_events": ["payment_intent.succeeded"]})
    assert ep.secret.startswith("whsec_") and ep.status == "enabled"
    got = stripe_client.v1.webhook_endpoints.retrieve(ep.id)
    assert "secret" not in got and got.enabled_events == ["payment_intent.succeeded"]
    upd = stripe_client.v1.webhook_endpoints.update(ep.id, params={"disabled": True, "enabled_events": ["*"]})
    assert upd.status == "disabled" and upd.enabled_events == ["*"]
    assert [e.id for e in stripe_client.v1.webhook_endpoints.list().data] == [ep.id]
    assert stripe_client.v1.webhook_endpoints.delete(ep.id).deleted
    with pytest.raises(stripe.InvalidRequestError):
        stripe_client.v1.webhook_endpoints.create(params={"url": "ftp://x", "enabled_events": ["*"]})


def test_deliveries_are_signed_and_verify_with_construct_event(stripe_client, emulator, receiver):
    ep = stripe_client.v1.webhook_endpoints.create(params={"url": receiver.url, "enabled_events": ["*"]})
    customer = stripe_client.v1.customers.create(params={"email": "hook@example.com"})
    receiver.wait_for(1)
    headers, body = receiver.received[0]
    event = stripe.Webhook.construct_event(body.decode(), headers["stripe-signature"], ep.secret)
    assert event.type == "customer.created" and event.data.object.id == customer.id
    with pytest.raises(stripe.SignatureVerificationError):
        stripe.Webhook.construct_event(body.decode(), headers["stripe-signature"], "whsec_wrong")
    assert emulator.emulator.webhooks.wait_idle()
    assert stripe_client.v1.events.retrieve(event.id).pending_webhooks == 0
    log = httpx.get(f"{emulator.url}/_emulator/webhook_deliveries", params={"event": event.id},
                    headers=emulator.control_headers).json()["data"]
    assert log[0]["status"] == "succeeded" and log[0]["attempts"][0]["status_code"] == 200
    assert "secret" not in json.dumps(log)


def test_only_subscribed_events_are_delivered(stripe_client, emulator, receiver):
    stripe_client.v1.webhook_endpoints.create(params={"url": receiver.url,
                                                      "enabled_events": ["payment_intent.succeeded"]})
    stripe_client.v1.payment_intents.create(params={"amount": 500, "currency": "usd", "payment_method": "pm_card_visa",
                                                    "confirm": True, "payment_method_types": ["card"]})
    assert emulator.emulator.webhooks.wait_idle()
    types = [json.loads(body)["type"] for _, body in receiver.received]
    assert types == ["payment_intent.succeeded"]


def test_failed_deliveries_are_retried_with_backoff(stripe_client, emulator, receiver):
    _settings(emulator, retry_base_seconds=0.05, max_attempts=4)
    receiver.statuses = [500, 500]
    stripe_client.v1.webhook_endpoints.create(params={"url": receiver.url, "enabled_events": ["customer.created"]})
    customer_event_start = time.monotonic()
    stripe_client.v1.customers.create()
    receiver.wait_for(3)
    assert time.monotonic() - customer_event_start >= 0.05 + 0.1  # two backoff waits: 0.05 s then 0.1 s
    assert emulator.emulator.webhooks.wait_idle()
    record = httpx.get(f"{emulator.url}/_emulator/webhook_deliveries", headers=emulator.control_headers).json()["data"][0]
    assert [a["status_code"] for a in record["attempts"]] == [500, 500, 200] and record["status"] == "succeeded"
    event = stripe_client.v1.events.list(params={"type": "customer.created"}).data[0]
    assert event.pending_webhooks == 0


def test_delivery_hooks_hear_every_attempt_with_its_answer_and_no_secret(stripe_client, emulator, receiver):
    _settings(emulator, retry_base_seconds=0.05, max_attempts=4)
    receiver.statuses = [500]
    heard: list[dict] = []
    emulator.emulator.delivery_hooks.append(heard.append)
    try:
        stripe_client.v1.webhook_endpoints.create(params={"url": receiver.url, "enabled_events": ["customer.created"]})
        stripe_client.v1.customers.create()
        assert emulator.emulator.webhooks.wait_idle()  # the hooks hear an attempt before its record settles
    finally:
        emulator.emulator.delivery_hooks.remove(heard.append)
    event = stripe_client.v1.events.list(params={"type": "customer.created"}).data[0]
    assert [(h["event"], h["event_type"], h["attempt"], h["status_code"]) for h in heard] == [
        (event.id, "customer.created", 1, 500), (event.id, "customer.created", 2, 200)]
    assert heard[0]["url"] == receiver.url and heard[0]["error"] is None and heard[0]["duration_ms"] >= 0
    assert "secret" not in json.dumps(heard) and "whsec_" not in json.dumps(heard)


def test_gives_up_after_max_attempts_and_unreachable_endpoints_do_not_block(stripe_client, emulator):
    import socket

    # An endpoint that takes the connection and never answers: each attempt lasts the whole timeout.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        _settings(emulator, retry_base_seconds=0.01, max_attempts=2, timeout_seconds=2)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/hook"
        stripe_client.v1.webhook_endpoints.create(params={"url": url, "enabled_events": ["*"]})
        stripe_client.v1.customers.create()
        # An ordering check: had the request waited for the delivery, an attempt would have ended by now.
        records = httpx.get(f"{emulator.url}/_emulator/webhook_deliveries", headers=emulator.control_headers).json()["data"]
        assert all(not r["attempts"] for r in records)
        assert emulator.emulator.webhooks.wait_idle()
    record = httpx.get(f"{emulator.url}/_emulator/webhook_deliveries", headers=emulator.control_headers).json()["data"][0]
    assert record["status"] == "failed" and len(record["attempts"]) == 2 and record["attempts"][0]["error"]
    assert stripe_client.v1.events.list().data[0].pending_webhooks == 1


def test_duplicate_and_out_of_order_delivery_faults(stripe_client, emulator, receiver):
    stripe_client.v1.webhook_endpoints.create(params={"url": receiver.url, "enabled_events": ["customer.created"]})
    httpx.post(f"{emulator.url}/_emulator/faults", json={"kind": "webhook_duplicate", "count": 1},
               headers=emulator.control_headers).raise_for_status()
    first = stripe_client.v1.customers.create(params={"name": "one"})
    receiver.wait_for(2)
    assert emulator.emulator.webhooks.wait_idle()
    ids = [json.loads(body)["data"]["object"]["id"] for _, body in receiver.received]
    assert ids == [first.id, first.id]
    receiver.received.clear()
    httpx.post(f"{emulator.url}/_emulator/faults", json={"kind": "webhook_out_of_order", "count": 3},
               headers=emulator.control_headers).raise_for_status()
    made = [stripe_client.v1.customers.create(params={"name": str(i)}).id for i in range(3)]
    receiver.wait_for(3)
    ids = [json.loads(body)["data"]["object"]["id"] for _, body in receiver.received]
    assert ids == list(reversed(made))


def test_endpoint_pinned_to_an_old_version_gets_old_shapes(stripe_client, emulator, receiver):
    stripe_client.v1.webhook_endpoints.create(params={"url": receiver.url, "api_version": "2020-08-27",
                                                      "enabled_events": ["payment_intent.succeeded"]})
    pi = stripe_client.v1.payment_intents.create(params={"amount": 800, "currency": "usd", "confirm": True,
                                                         "payment_method": "pm_card_visa",
                                                         "payment_method_types": ["card"]})
    receiver.wait_for(1)
    body = json.loads(receiver.received[0][1])
    assert body["api_version"] == "2020-08-27"
    sent = body["data"]["object"]
    assert "latest_charge" not in sent and [c["id"] for c in sent["charges"]["data"]] == [pi.latest_charge]
    stored = stripe_client.v1.events.retrieve(body["id"])
    assert stored.data.object.latest_charge == pi.latest_charge and "_raw" not in stored
