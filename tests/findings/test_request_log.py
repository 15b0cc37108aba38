"""The Stripe request log on a real emulator: each answered request becomes one stripe_request event, in its turn."""

from __future__ import annotations

import asyncio
import base64
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
import stripe

from stripebench_emulator.testing import TEST_KEY, emulator, emulator_server  # noqa: F401 - pytest fixtures
from stripebench_tui.core.bus import EventBus
from stripebench_tui.core.events import SIGNED, SOURCE_HEADER, StripeRequest, WebhookDelivery
from stripebench_tui.core.redact import Redactor
from stripebench_tui.stripe_account.request_log import (
    BODY_CAP,
    RequestLog,
    build_event,
    capped,
    delivery_event,
    object_ids,
    request_source,
)


@pytest.mark.parametrize("headers, source", [
    ({SOURCE_HEADER.lower(): "grader"}, "grader"),
    ({"user-agent": "Mozilla/5.0 (X11; Linux x86_64) HeadlessChrome/120"}, "browser"),
    ({"authorization": "Bearer pk_test_abc123"}, "browser"),
    ({"user-agent": "Stripe/v1 PythonBindings/16.1.0"}, "app"),
    ({"user-agent": "curl/8.5.0"}, "agent"),
])
def test_who_asked_comes_from_the_request_headers(headers, source):
    assert request_source(headers) == source


def test_an_event_carries_every_field_with_bodies_redacted_and_capped():
    redactor = Redactor(["whsec_supersecretvalue"])
    body = {"error": {"type": "invalid_request_error", "code": "parameter_invalid_empty",
                      "message": "bad " + "x" * (2 * BODY_CAP)}}
    ev = build_event("POST", "/v1/customers/cus_123abc/sources", "", b"source=tok_visa&note=whsec_supersecretvalue",
                     {"idempotency-key": "order-7", "content-type": "application/x-www-form-urlencoded",
                      "user-agent": "curl/8"}, 400, {"Request-Id": "req_9", "Stripe-Version": "2026-10-28.clover"},
                     body, 0.0123456, redactor)
    assert (ev.request_id, ev.method, ev.path, ev.status) == ("req_9", "POST", "/v1/customers/cus_123abc/sources", 400)
    assert (ev.error_type, ev.error_code, ev.idempotency_key) == ("invalid_request_error", "parameter_invalid_empty",
                                                                 "order-7")
    assert ev.api_version == "2026-10-28.clover" and ev.latency == 0.012346 and ev.source == "agent"
    assert ev.object_ids == ["cus_123abc"]
    assert ev.request_body == "source=tok_visa&note=[REDACTED]"
    assert len(ev.response_body) < BODY_CAP + 40 and ev.response_body.endswith("more characters]")
    assert capped("short") == "short"


@pytest.mark.parametrize("authorization, kind", [
    ("Bearer rk_test_51Hx", "rk_test"), ("Bearer sk_live_9", "sk_live"), ("Bearer pk_test_abc", "pk_test"),
    ("Basic " + base64.b64encode(b"sk_test_abc:").decode(), "sk_test"),
    ("", "none"), ("Bearer not-a-stripe-key_with_parts", "other"),
])
def test_an_event_keeps_the_kind_of_key_it_carried_never_the_key(authorization, kind):
    redactor = Redactor(["sk_test_abc"])
    ev = build_event("GET", "/v1/balance", "", b"", {"authorization": authorization}, 200, {}, {}, 0.01, redactor)
    assert ev.key_kind == kind
    assert "51Hx" not in str(ev.to_dict()) and "abc" not in str(ev.to_dict())


def test_a_delivery_record_becomes_an_event_redacted_and_capped():
    redactor = Redactor(["whsec_supersecretvalue"])
    ev = delivery_event({"id": "whdel_1", "event": "evt_1", "event_type": "checkout.session.completed",
                         "endpoint": "we_1", "url": "http://127.0.0.1:5000/webhooks/stripe", "attempt": 2,
                         "status_code": 200, "error": None, "duration_ms": 12.5,
                         "response_body": "ok whsec_supersecretvalue " + "x" * (2 * BODY_CAP)}, redactor)
    assert (ev.event_id, ev.event_type, ev.url, ev.sender, ev.signature, ev.attempt, ev.status, ev.error, ev.latency) == (
        "evt_1", "checkout.session.completed", "http://127.0.0.1:5000/webhooks/stripe", "stripe", SIGNED, 2, 200, "",
        0.0125)
    assert ev.response_body.startswith("ok [REDACTED] x") and ev.response_body.endswith("more characters]")
    refused = delivery_event({"event": "evt_2", "status_code": None, "error": "ConnectError: refused"}, redactor)
    assert (refused.status, refused.error, refused.rows_added) == (0, "ConnectError: refused", None)


def test_object_ids_are_the_paths_the_answer_and_a_lists_items():
    assert object_ids("/v1/customers", {"id": "cus_1", "object": "customer"}) == ["cus_1"]
    assert object_ids("/v1/prices", {"object": "list", "data": [{"id": "price_1"}, {"id": "price_2"}]}) == [
        "price_1", "price_2"]
    assert object_ids("/v1/checkout/sessions/cs_1/line_items", {"object": "list", "data": []}) == ["cs_1"]


async def test_requests_on_the_emulator_reach_the_bus_once_in_the_turn_that_made_them(emulator):  # noqa: F811 - pytest fixtures imported above, requested by name
    bus = EventBus()
    seen: list[StripeRequest] = []
    bus.subscribe(lambda e: seen.append(e) if isinstance(e, StripeRequest) else None, name="test")
    log = RequestLog(bus, secrets=[TEST_KEY])
    log.attach(emulator.emulator)
    client = stripe.StripeClient(TEST_KEY, base_addresses={"api": emulator.url}, max_network_retries=0)
    try:
        bus.turn = 1
        customer = await asyncio.to_thread(client.v1.customers.create, params={"email": "a@example.com"})
        bus.turn = 2
        with pytest.raises(stripe.InvalidRequestError):
            await asyncio.to_thread(client.v1.customers.retrieve, "cus_missing")
        await asyncio.to_thread(httpx.get, f"{emulator.url}/v1/events", timeout=10,  # the watcher's own polls
                                headers={"Authorization": f"Bearer {TEST_KEY}", SOURCE_HEADER: "watcher"})
        await log.turn_end_hook(None)  # whatever is still queued joins this turn
        await bus.drain()
    finally:
        await log.final_hook(None)
    assert log.hook not in emulator.emulator.response_hooks  # detached at the end
    assert [(r.turn, r.method, r.path, r.status, r.source) for r in seen] == [
        (1, "POST", "/v1/customers", 200, "app"),
        (2, "GET", "/v1/customers/cus_missing", 404, "app"),
    ]
    assert seen[0].object_ids == [customer.id] and seen[0].request_body == "email=a@example.com"
    assert seen[1].error_code == "resource_missing" and seen[1].request_id.startswith("req_")
    assert len({r.request_id for r in seen}) == 2
    await bus.close(timeout=2)


class Receiver:
    """A webhook endpoint on a real port (the emulator posts with its own client) answering ``statuses`` in turn."""

    def __init__(self, statuses: list[int]) -> None:
        statuses = list(statuses)

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # http.server's naming
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                self.send_response(statuses.pop(0) if statuses else 200)
                self.send_header("Content-Length", "6")
                self.end_headers()
                self.wfile.write(b"thanks")

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


async def test_webhook_deliveries_the_emulators_and_a_graders_reach_the_bus(emulator):  # noqa: F811 - pytest fixtures imported above, requested by name
    """The emulator delivers to an endpoint that fails once (so it retries); a grader's delivery comes through
    ``record_delivery``, redacted like the rest."""
    bus = EventBus()
    seen: list[WebhookDelivery] = []
    bus.subscribe(lambda e: seen.append(e) if isinstance(e, WebhookDelivery) else None, name="test")
    log = RequestLog(bus, secrets=[TEST_KEY, "whsec_graders_secret"])
    log.attach(emulator.emulator)
    receiver = Receiver([500])
    client = stripe.StripeClient(TEST_KEY, base_addresses={"api": emulator.url}, max_network_retries=0)
    hooks = emulator.emulator.webhooks
    hooks.settings.update(retry_base_seconds=0.01)
    try:
        bus.turn = 2
        await asyncio.to_thread(client.v1.webhook_endpoints.create,
                                params={"url": receiver.url, "enabled_events": ["customer.created"]})
        await asyncio.to_thread(client.v1.customers.create)
        assert await asyncio.to_thread(hooks.wait_idle)  # the hooks have heard every attempt by then
        log.record_delivery(WebhookDelivery(event_id="evt_x", sender="grader", signature="none", status=200,
                                            url="http://127.0.0.1:1/hook?k=whsec_graders_secret",
                                            response_body="echo whsec_graders_secret"))
        await log.turn_end_hook(None)
        await bus.drain()
    finally:
        await log.final_hook(None)
        receiver.close()
    assert log.delivery_hook not in emulator.emulator.delivery_hooks  # detached at the end
    assert [(d.turn, d.sender, d.attempt, d.status, d.event_type) for d in seen[:2]] == [
        (2, "stripe", 1, 500, "customer.created"), (2, "stripe", 2, 200, "customer.created")]
    assert seen[0].event_id == seen[1].event_id and seen[0].event_id.startswith("evt_")
    assert seen[1].response_body == "thanks" and seen[1].url == receiver.url
    grader = seen[2]
    assert grader.sender == "grader" and "whsec_graders_secret" not in grader.url + grader.response_body
    await bus.close(timeout=2)


async def test_through_the_proxy_real_test_mode_uses_the_same_log(emulator):  # noqa: F811 - pytest fixtures imported above, requested by name
    """Real Stripe cannot be reached here: the proxy's upstream is the emulator, which it treats like Stripe."""
    from stripebench_tui.runtime.request_proxy import start_request_proxy
    from stripebench_tui.stripe_account.backend import REAL, StripeBackend

    backend = StripeBackend(kind=REAL, api_base=emulator.url, secret_key=TEST_KEY, publishable_key="",
                            js_url="https://js.stripe.com/v3")
    proxy = start_request_proxy(backend)
    bus = EventBus()
    seen: list[StripeRequest] = []
    bus.subscribe(lambda e: seen.append(e) if isinstance(e, StripeRequest) else None, name="test")
    log = RequestLog(bus, secrets=[TEST_KEY])
    log.attach_proxy(proxy)
    try:
        assert backend.api_base == proxy.url and backend.env_vars()["STRIPE_API_BASE"] == proxy.url
        client = stripe.StripeClient(TEST_KEY, base_addresses={"api": backend.api_base}, max_network_retries=0)
        bus.turn = 3
        price = await asyncio.to_thread(client.v1.prices.create,
                                        params={"currency": "usd", "unit_amount": 500, "product_data": {"name": "Tea"}},
                                        options={"idempotency_key": "price-1"})
        await log.turn_end_hook(None)
        await bus.drain()
    finally:
        await log.final_hook(None)
        proxy.close()
    assert proxy.on_answer is None  # detached
    [req] = seen
    assert (req.turn, req.method, req.path, req.status, req.source) == (3, "POST", "/v1/prices", 200, "app")
    assert req.request_id.startswith("req_") and req.idempotency_key == "price-1" and req.object_ids == [price.id]
    assert req.api_version and req.latency is not None and "unit_amount=500" in req.request_body
    await bus.close(timeout=2)
