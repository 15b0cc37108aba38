"""Events: one per state change, previous attributes, filters, listeners."""

from __future__ import annotations

import uuid

import pytest
import stripe


def test_created_and_updated_events(stripe_client: stripe.StripeClient) -> None:
    key = str(uuid.uuid4())
    customer = stripe_client.v1.customers.create(params={"email": "a@example.com", "metadata": {"k": "v"}},
                                                 options={"idempotency_key": key})
    stripe_client.v1.customers.update(customer.id, params={"name": "Ann", "metadata": {"k": "", "n": "1"}})
    stripe_client.v1.customers.update(customer.id, params={"name": "Ann"})  # no change, no event

    events = stripe_client.v1.events.list().data
    assert [e.type for e in events] == ["customer.updated", "customer.created"]
    updated, created = events
    assert created.id.startswith("evt_") and created.object == "event" and created.livemode is False
    assert created.api_version == stripe.api_version and created.pending_webhooks == 0
    assert created.data.object.id == customer.id and created.data.object.email == "a@example.com"
    assert created.request.idempotency_key == key and created.request.id.startswith("req_")
    assert updated.data.object.name == "Ann"
    assert updated.data.previous_attributes.to_dict() == {"name": None, "metadata": {"k": "v", "n": None}}
    assert stripe_client.v1.events.retrieve(created.id).data.object.email == "a@example.com"


def test_event_filters(stripe_client: stripe.StripeClient, emulator) -> None:
    stripe_client.v1.products.create(params={"name": "P", "default_price_data": {"currency": "usd", "unit_amount": 1}})
    emulator.emulator.clock.advance(60)
    stripe_client.v1.coupons.create(params={"percent_off": 5})
    types = lambda **p: [e.type for e in stripe_client.v1.events.list(params=p).auto_paging_iter()]
    assert types() == ["coupon.created", "product.updated", "price.created", "product.created"]
    assert types(type="product.created") == ["product.created"]
    assert types(type="product.*") == ["product.updated", "product.created"]
    assert types(types=["price.created", "coupon.created"]) == ["coupon.created", "price.created"]
    latest = stripe_client.v1.events.list(params={"limit": 1}).data[0]
    assert types(created={"gte": latest.created}) == ["coupon.created"]
    assert types(created={"lt": latest.created}) == ["product.updated", "price.created", "product.created"]
    with pytest.raises(stripe.InvalidRequestError):
        stripe_client.v1.events.retrieve("evt_missing")


def test_event_snapshot_uses_the_account_version(stripe_client: stripe.StripeClient) -> None:
    coupon = stripe_client.v1.coupons.create(params={"percent_off": 5})
    stripe_client.v1.promotion_codes.create(params={"coupon": coupon.id}, options={"stripe_version": "2024-06-20"})
    event = stripe_client.v1.events.list(params={"type": "promotion_code.created"}).data[0]
    # The account default (the SDK's pin) is after 2025-09-30, so the snapshot has the newer shape.
    assert event.data.object.promotion.coupon == coupon.id


def test_listeners_see_committed_events_only(stripe_client: stripe.StripeClient, emulator) -> None:
    seen: list[str] = []

    def listener(event: dict) -> None:
        seen.append(event["type"])

    emulator.emulator.on_event(listener)
    stripe_client.v1.customers.create(params={"email": "l@example.com"})
    with pytest.raises(stripe.InvalidRequestError):
        stripe_client.v1.prices.create(params={"product_data": {"name": "x"}, "currency": "usd"})  # no amount
    emulator.emulator.off_event(listener)
    assert seen == ["customer.created"]
    assert [e.type for e in stripe_client.v1.events.list().data] == ["customer.created"]


def test_a_failing_listener_does_not_fail_the_request(stripe_client: stripe.StripeClient, emulator) -> None:
    def broken(event: dict) -> None:
        raise RuntimeError("listener bug")

    emulator.emulator.on_event(broken)
    try:
        assert stripe_client.v1.customers.create(params={"email": "ok@example.com"}).email == "ok@example.com"
    finally:
        emulator.emulator.off_event(broken)


async def test_async_request_hooks_can_answer_instead(stripe_client: stripe.StripeClient, emulator) -> None:
    from stripebench_emulator.web.dispatch import Reply

    calls: list[str] = []

    async def fail_coupons(method: str, path: str, headers: dict) -> Reply | None:
        calls.append(f"{method} {path}")
        if path == "/v1/coupons":
            return Reply(500, {"error": {"type": "api_error", "message": "injected"}})
        return None

    emulator.emulator.request_hooks.append(fail_coupons)
    try:
        import asyncio

        customer = await asyncio.to_thread(stripe_client.v1.customers.create)
        with pytest.raises(stripe.APIError) as err:
            await asyncio.to_thread(stripe_client.v1.coupons.create, params={"percent_off": 5})
    finally:
        emulator.emulator.request_hooks.remove(fail_coupons)
    assert customer.id.startswith("cus_") and err.value.http_status == 500
    assert err.value.request_id.startswith("req_")
    assert calls == ["POST /v1/customers", "POST /v1/coupons"]
    assert stripe_client.v1.coupons.list().data == []
