"""Stripe's request conventions: auth, errors, params, idempotency, expand, versions, request ids."""

from __future__ import annotations

import base64
import uuid

import httpx
import pytest
import stripe

from stripebench_emulator.testing import TEST_KEY


def test_auth_errors(emulator) -> None:
    url = f"{emulator.url}/v1/customers"
    missing = httpx.get(url)
    assert missing.status_code == 401
    assert missing.json()["error"]["message"].startswith("You did not provide an API key.")
    assert missing.headers["Request-Id"].startswith("req_")
    for key in ("sk_live_abcdefgh1234", "nonsense_key_9999", "sk_test_"):
        bad = httpx.get(url, headers={"Authorization": f"Bearer {key}"})
        assert bad.status_code == 401, key
        body = bad.json()["error"]
        assert body["type"] == "invalid_request_error" and body["message"].startswith("Invalid API Key provided")
        assert key not in body["message"] or len(key) <= 8  # keys are masked, as on Stripe
    basic = base64.b64encode(b"rk_test_restricted:").decode()
    assert httpx.get(url, headers={"Authorization": f"Basic {basic}"}).status_code == 200


def test_sdk_raises_authentication_error(emulator) -> None:
    client = stripe.StripeClient("sk_live_realkey123456", base_addresses={"api": emulator.url}, max_network_retries=0)
    with pytest.raises(stripe.AuthenticationError) as err:
        client.v1.customers.list()
    assert err.value.http_status == 401


def test_param_errors(stripe_client: stripe.StripeClient) -> None:
    cases = [
        (lambda: stripe_client.v1.customers.create(params={"emali": "x"}), "emali", "Received unknown parameter: emali"),
        (lambda: stripe_client.v1.customers.create(params={"address": {"zip": "1"}}), "address[zip]",
         "Received unknown parameter: address[zip]"),
        (lambda: stripe_client.v1.customers.create(params={"balance": "abc"}), "balance", "Invalid integer: abc"),
        (lambda: stripe_client.v1.products.create(params={"name": "x", "active": "maybe"}), "active",
         "Invalid boolean: maybe"),
        (lambda: stripe_client.v1.products.create(params={"description": "x"}), "name",
         "Missing required param: name."),
        (lambda: stripe_client.v1.customers.list(params={"limit": "lots"}), "limit", "Invalid integer: lots"),
    ]
    for call, param, message in cases:
        with pytest.raises(stripe.InvalidRequestError) as err:
            call()
        assert err.value.http_status == 400
        assert err.value.param == param and err.value.user_message == message
        assert err.value.json_body["error"]["type"] == "invalid_request_error"
        assert err.value.request_id.startswith("req_")
    assert stripe_client.v1.customers.list().data == [] and stripe_client.v1.products.list().data == []


def test_unrecognized_url(api: httpx.Client) -> None:
    response = api.get("/v1/nonexistent_things")
    assert response.status_code == 404
    assert response.json()["error"]["message"].startswith("Unrecognized request URL (GET: /v1/nonexistent_things)")
    assert api.put("/v1/customers").status_code == 404


def test_idempotent_replay_and_mismatch(stripe_client: stripe.StripeClient) -> None:
    key = str(uuid.uuid4())
    first = stripe_client.v1.customers.create(params={"email": "once@example.com"}, options={"idempotency_key": key})
    again = stripe_client.v1.customers.create(params={"email": "once@example.com"}, options={"idempotency_key": key})
    assert again.id == first.id
    assert again.last_response.headers["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first.last_response.headers
    assert len(stripe_client.v1.customers.list().data) == 1
    with pytest.raises(stripe.IdempotencyError) as err:
        stripe_client.v1.customers.create(params={"email": "other@example.com"}, options={"idempotency_key": key})
    assert err.value.http_status == 400 and key in err.value.user_message
    assert len(stripe_client.v1.customers.list().data) == 1


def test_failed_validation_is_not_stored_under_the_key(stripe_client: stripe.StripeClient) -> None:
    key = str(uuid.uuid4())
    with pytest.raises(stripe.InvalidRequestError):
        stripe_client.v1.customers.create(params={"balance": "x"}, options={"idempotency_key": key})
    fixed = stripe_client.v1.customers.create(params={"balance": 5}, options={"idempotency_key": key})
    assert fixed.balance == 5


def test_handler_errors_are_replayed(stripe_client: stripe.StripeClient) -> None:
    key = str(uuid.uuid4())
    for _ in range(2):
        with pytest.raises(stripe.InvalidRequestError) as err:
            stripe_client.v1.prices.create(params={"product": "prod_missing", "currency": "usd", "unit_amount": 1},
                                           options={"idempotency_key": key})
        assert err.value.http_status == 404
    assert err.value.headers.get("Idempotent-Replayed") == "true"


def test_expand_nested_into_lists_and_bad_paths(stripe_client: stripe.StripeClient) -> None:
    customer = stripe_client.v1.customers.create(params={"email": "e@example.com"})
    coupon = stripe_client.v1.coupons.create(params={"percent_off": 5})
    product = stripe_client.v1.products.create(params={"name": "Hat", "default_price_data": {"currency": "usd",
                                                                                             "unit_amount": 100}})
    promo = stripe_client.v1.promotion_codes.create(params={"promotion": {"type": "coupon", "coupon": coupon.id},
                                                            "customer": customer.id})
    both = stripe_client.v1.promotion_codes.retrieve(promo.id, params={"expand": ["customer", "promotion.coupon"]})
    assert both.customer.email == "e@example.com" and both.promotion.coupon.percent_off == 5

    price = stripe_client.v1.prices.retrieve(product.default_price, params={"expand": ["product.default_price"]})
    assert price.product.name == "Hat" and price.product.default_price.id == price.id

    listed = stripe_client.v1.prices.list(params={"expand": ["data.product.default_price"]})
    assert listed.data[0].product.default_price.unit_amount == 100

    for bad in (["email"], ["nonsense"], ["product.nonsense"], ["data.customer"], ["a.b.c.d.e"]):
        with pytest.raises(stripe.InvalidRequestError) as err:
            stripe_client.v1.prices.retrieve(price.id, params={"expand": bad})
        assert err.value.http_status == 400 and "expand" in err.value.user_message.lower(), bad
    with pytest.raises(stripe.InvalidRequestError) as err:
        stripe_client.v1.prices.list(params={"expand": ["product"]})
    assert "data.product" in err.value.user_message


def test_bad_expand_leaves_state_unchanged(stripe_client: stripe.StripeClient) -> None:
    with pytest.raises(stripe.InvalidRequestError):
        stripe_client.v1.customers.create(params={"email": "x@example.com", "expand": ["nope"]})
    assert stripe_client.v1.customers.list().data == []


def test_versions(emulator, api: httpx.Client) -> None:
    default = api.get("/v1/customers")
    assert default.headers["Stripe-Version"] == stripe.api_version
    pinned = api.get("/v1/customers", headers={"Stripe-Version": "2022-11-15"})
    assert pinned.status_code == 200 and pinned.headers["Stripe-Version"] == "2022-11-15"
    bad = api.get("/v1/customers", headers={"Stripe-Version": "yesterday"})
    assert bad.status_code == 400 and "Invalid Stripe API version" in bad.json()["error"]["message"]


def test_request_ids_are_distinct(api: httpx.Client) -> None:
    ids = {api.get("/v1/customers").headers["Request-Id"] for _ in range(5)}
    assert len(ids) == 5 and all(i.startswith("req_") for i in ids)


def test_module_level_sdk(stripe_sdk) -> None:
    customer = stripe_sdk.Customer.create(email="mod@example.com")
    assert stripe_sdk.Customer.retrieve(customer.id).email == "mod@example.com"
    assert TEST_KEY.startswith("sk_test_")


def test_idempotency_keys_expire_after_a_day(stripe_client: stripe.StripeClient, emulator) -> None:
    first = stripe_client.v1.customers.create(params={"email": "old@example.com"}, options={"idempotency_key": "day"})
    emulator.emulator.clock.advance(25 * 3600)
    emulator.emulator.store.prune_idempotency(emulator.emulator.clock.now() - 24 * 3600)
    again = stripe_client.v1.customers.create(params={"email": "new@example.com"}, options={"idempotency_key": "day"})
    assert again.id != first.id and again.email == "new@example.com"
