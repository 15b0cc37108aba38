"""The Stripe request log on a real emulator: each answered request becomes one stripe_request event, in its turn."""

from __future__ import annotations

import asyncio

import httpx
import pytest
import stripe

from stripebench_tui.core.bus import EventBus
from stripebench_tui.core.events import SOURCE_HEADER, StripeRequest
from stripebench_tui.core.redact import Redactor
from stripebench_tui.stripe_account.request_log import (
    BODY_CAP,
    RequestLog,
    build_event,
    capped,
    object_ids,
    request_source,
)
from stripebench_emulator.testing import TEST_KEY, emulator, emulator_server  # noqa: F401 - pytest fixtures


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


def test_object_ids_are_the_paths_the_answer_and_a_lists_items():
    assert object_ids("/v1/customers", {"id": "cus_1", "object": "customer"}) == ["cus_1"]
    assert object_ids("/v1/prices", {"object": "list", "data": [{"id": "price_1"}, {"id": "price_2"}]}) == [
        "price_1", "price_2"]
    assert object_ids("/v1/checkout/sessions/cs_1/line_items", {"object": "list", "data": []}) == ["cs_1"]


async def test_requests_on_the_emulator_reach_the_bus_once_in_the_turn_that_made_them(emulator):  # noqa: F811
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


async def test_through_the_proxy_real_test_mode_uses_the_same_log(emulator):  # noqa: F811
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
