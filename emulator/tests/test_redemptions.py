"""Coupons and promotion codes are redeemed alike wherever they are applied (``emulator.redemption``): on a
subscription, a customer (before basil), an invoice, an invoice item and a Checkout Session. Counted on the coupon
and the promotion code; refused with Stripe's error, naming the param passed, when used up, expired (on the
customer's test clock), restricted to another customer, for first-time customers only, or below a minimum."""

from __future__ import annotations

import httpx
import pytest
import stripe

OLD = {"stripe_version": "2024-06-20"}  # customers still take ``coupon`` / ``promotion_code``
CARD = {"email": "ada@example.com", "card_number": "4242 4242 4242 4242", "expiry": "12 / 34", "cvc": "123",
        "name": "Ada Lovelace"}
FIRST_TIME = "This promotion code cannot be redeemed because the associated customer has prior transactions."


@pytest.fixture
def monthly(stripe_client: stripe.StripeClient) -> stripe.Price:
    return stripe_client.v1.prices.create(params={"currency": "usd", "unit_amount": 2000,
                                                  "recurring": {"interval": "month"}, "product_data": {"name": "Pro"}})


@pytest.fixture
def one_time(stripe_client: stripe.StripeClient) -> stripe.Price:
    return stripe_client.v1.prices.create(params={"currency": "usd", "unit_amount": 1500,
                                                  "product_data": {"name": "T-shirt"}})


def _customer(client: stripe.StripeClient, **params) -> stripe.Customer:
    return client.v1.customers.create(params={"payment_method": "pm_card_visa",
                                              "invoice_settings": {"default_payment_method": "pm_card_visa"},
                                              **params})


def _promo(client: stripe.StripeClient, coupon: stripe.Coupon, **params) -> stripe.PromotionCode:
    return client.v1.promotion_codes.create(params={"promotion": {"type": "coupon", "coupon": coupon.id}, **params})


def _counts(client: stripe.StripeClient, coupon: stripe.Coupon, promo: stripe.PromotionCode | None = None) -> tuple:
    counted = (client.v1.coupons.retrieve(coupon.id).times_redeemed,)
    return counted + ((client.v1.promotion_codes.retrieve(promo.id).times_redeemed,) if promo else ())


def _refused(call) -> stripe.InvalidRequestError:
    with pytest.raises(stripe.InvalidRequestError) as info:
        call()
    return info.value


def _page(emulator, session, action, body):
    return httpx.post(f"{emulator.url}/_checkout/{session.id}/{action}", json=body).json()


# each path applies ``spec`` ({"coupon": …} or {"promotion_code": …}) for ``customer`` and names the param it sent
def _on_subscription(client, customer, spec, price):
    return client.v1.subscriptions.create(params={"customer": customer.id, "items": [{"price": price.id}],
                                                  "discounts": [spec]}), "discounts[0]"


def _on_customer(client, customer, spec, price):
    return client.v1.customers.update(customer.id, params=spec, options=OLD), ""


def _on_invoice(client, customer, spec, price):
    return client.v1.invoices.create(params={"customer": customer.id, "discounts": [spec]}), "discounts[0]"


def _on_invoice_item(client, customer, spec, price):
    return client.v1.invoice_items.create(params={"customer": customer.id, "amount": 3000, "currency": "usd",
                                                  "discounts": [spec]}), "discounts[0]"


def _on_checkout(client, customer, spec, price):
    return client.v1.checkout.sessions.create(params={
        "mode": "subscription", "success_url": "https://a.test/ok", "customer": customer.id,
        "line_items": [{"price": price.id, "quantity": 1}], "discounts": [spec]}), "discounts[0]"


PATHS = [_on_subscription, _on_customer, _on_invoice, _on_invoice_item, _on_checkout]


def _param(prefix: str, name: str) -> str:
    return f"{prefix}[{name}]" if prefix else name


@pytest.mark.parametrize("apply", PATHS[:4], ids=lambda f: f.__name__)
def test_each_path_counts_one_redemption_on_the_coupon_and_the_promotion_code(stripe_client, monthly, apply):
    coupon = stripe_client.v1.coupons.create(params={"percent_off": 10, "duration": "forever"})
    promo = _promo(stripe_client, coupon)
    apply(stripe_client, _customer(stripe_client), {"promotion_code": promo.id}, monthly)
    assert _counts(stripe_client, coupon, promo) == (1, 1)
    apply(stripe_client, _customer(stripe_client), {"coupon": coupon.id}, monthly)
    assert _counts(stripe_client, coupon, promo) == (2, 1)


def test_checkout_session_created_with_discounts_counts_when_it_completes(stripe_client, monthly, one_time, emulator):
    coupon = stripe_client.v1.coupons.create(params={"percent_off": 10})
    promo = _promo(stripe_client, coupon)
    session = stripe_client.v1.checkout.sessions.create(params={
        "mode": "payment", "success_url": "https://a.test/ok", "line_items": [{"price": one_time.id, "quantity": 1}],
        "discounts": [{"promotion_code": promo.id}]})
    assert _counts(stripe_client, coupon, promo) == (0, 0)  # an open session has redeemed nothing yet
    assert _page(emulator, session, "submit", dict(CARD))["status"] == "complete"
    assert _counts(stripe_client, coupon, promo) == (1, 1)
    sub_session, _ = _on_checkout(stripe_client, _customer(stripe_client), {"promotion_code": promo.id}, monthly)
    assert _page(emulator, sub_session, "submit", dict(CARD))["status"] == "complete"
    assert _counts(stripe_client, coupon, promo) == (2, 2)  # once each, though the subscription takes it too


@pytest.mark.parametrize("apply", PATHS, ids=lambda f: f.__name__)
def test_a_used_up_promotion_code_is_inactive_and_refused_on_every_path(stripe_client, monthly, apply):
    coupon = stripe_client.v1.coupons.create(params={"percent_off": 10})
    promo = _promo(stripe_client, coupon, code="ONCE", max_redemptions=1)
    _on_subscription(stripe_client, _customer(stripe_client), {"promotion_code": promo.id}, monthly)
    assert stripe_client.v1.promotion_codes.retrieve(promo.id).active is False
    customer = _customer(stripe_client)
    err = _refused(lambda apply=apply: apply(stripe_client, customer, {"promotion_code": promo.id}, monthly))
    prefix = "" if apply is _on_customer else "discounts[0]"
    assert (err.http_status, err.error.type, err.error.param) == (400, "invalid_request_error",
                                                                  _param(prefix, "promotion_code"))
    assert err.user_message == "This promotion code is not active: ONCE"
    assert _counts(stripe_client, coupon, promo) == (1, 1)
    assert stripe_client.v1.customers.retrieve(customer.id).discount is None
    assert stripe_client.v1.subscriptions.list(params={"customer": customer.id}).data == []
    assert stripe_client.v1.invoices.list(params={"customer": customer.id}).data == []


@pytest.mark.parametrize("apply", PATHS, ids=lambda f: f.__name__)
def test_a_used_up_coupon_is_invalid_and_refused_with_coupon_expired(stripe_client, monthly, apply):
    coupon = stripe_client.v1.coupons.create(params={"percent_off": 10, "max_redemptions": 1})
    _on_invoice(stripe_client, _customer(stripe_client), {"coupon": coupon.id}, monthly)
    assert stripe_client.v1.coupons.retrieve(coupon.id).valid is False
    customer = _customer(stripe_client)
    err = _refused(lambda apply=apply: apply(stripe_client, customer, {"coupon": coupon.id}, monthly))
    prefix = "" if apply is _on_customer else "discounts[0]"
    assert (err.code, err.error.param, err.user_message) == ("coupon_expired", _param(prefix, "coupon"),
                                                             f"Coupon expired: {coupon.id}")
    assert _counts(stripe_client, coupon) == (1,)
    assert stripe_client.v1.invoice_items.list(params={"customer": customer.id}).data == []


def test_a_promotion_code_for_another_customer_is_refused(stripe_client, monthly):
    coupon = stripe_client.v1.coupons.create(params={"percent_off": 10})
    owner, other = _customer(stripe_client), _customer(stripe_client)
    promo = _promo(stripe_client, coupon, customer=owner.id)
    for apply in PATHS:
        err = _refused(lambda apply=apply: apply(stripe_client, other, {"promotion_code": promo.id}, monthly))
        assert err.error.param in ("promotion_code", "discounts[0][promotion_code]")
        assert err.user_message == f"This promotion code cannot be redeemed by this customer: {promo.code}"
    assert _counts(stripe_client, coupon, promo) == (0, 0)
    _on_customer(stripe_client, owner, {"promotion_code": promo.id}, monthly)
    assert _counts(stripe_client, coupon, promo) == (1, 1)


def test_first_time_transaction_refuses_a_customer_who_has_paid(stripe_client, monthly):
    coupon = stripe_client.v1.coupons.create(params={"percent_off": 10})
    promo = _promo(stripe_client, coupon, restrictions={"first_time_transaction": True})
    paid = _customer(stripe_client)
    stripe_client.v1.payment_intents.create(params={"amount": 500, "currency": "usd", "customer": paid.id,
                                                    "payment_method": "pm_card_visa", "confirm": True,
                                                    "automatic_payment_methods": {"enabled": True,
                                                                                  "allow_redirects": "never"}})
    for apply in PATHS:
        err = _refused(lambda apply=apply: apply(stripe_client, paid, {"promotion_code": promo.id}, monthly))
        assert err.user_message == FIRST_TIME
        assert err.error.param in ("promotion_code", "discounts[0][promotion_code]")
    assert _counts(stripe_client, coupon, promo) == (0, 0)
    _on_subscription(stripe_client, _customer(stripe_client), {"promotion_code": promo.id}, monthly)  # a new one may
    assert _counts(stripe_client, coupon, promo) == (1, 1)


def test_minimum_amount_in_its_currency_must_be_reached(stripe_client, monthly, one_time):
    coupon = stripe_client.v1.coupons.create(params={"percent_off": 10})
    promo = _promo(stripe_client, coupon, restrictions={"minimum_amount": 2500, "minimum_amount_currency": "usd"})
    customer = _customer(stripe_client)
    for apply in (_on_subscription, _on_checkout):  # 20.00 a month
        err = _refused(lambda apply=apply: apply(stripe_client, customer, {"promotion_code": promo.id}, monthly))
        assert err.error.param == "discounts[0][promotion_code]" and "25.00 USD" in err.user_message
    err = _refused(lambda: stripe_client.v1.invoice_items.create(params={
        "customer": customer.id, "amount": 2499, "currency": "usd", "discounts": [{"promotion_code": promo.id}]}))
    assert err.error.param == "discounts[0][promotion_code]"
    assert _counts(stripe_client, coupon, promo) == (0, 0)
    _on_invoice_item(stripe_client, customer, {"promotion_code": promo.id}, monthly)  # 30.00 reaches it
    assert _counts(stripe_client, coupon, promo) == (1, 1)


def test_expiry_is_judged_on_the_customers_test_clock(stripe_client, monthly):
    now = stripe_client.v1.customers.create().created
    coupon = stripe_client.v1.coupons.create(params={"percent_off": 10, "redeem_by": now + 86400})
    other = stripe_client.v1.coupons.create(params={"percent_off": 5})
    promo = _promo(stripe_client, other, code="SOON", expires_at=now + 86400)
    clock = stripe_client.v1.test_helpers.test_clocks.create(params={"frozen_time": now})
    late = _customer(stripe_client, test_clock=clock.id)
    stripe_client.v1.test_helpers.test_clocks.advance(clock.id, params={"frozen_time": now + 2 * 86400})
    for apply in PATHS:
        err = _refused(lambda apply=apply: apply(stripe_client, late, {"coupon": coupon.id}, monthly))
        assert (err.code, err.user_message) == ("coupon_expired", f"Coupon expired: {coupon.id}")
        err = _refused(lambda apply=apply: apply(stripe_client, late, {"promotion_code": promo.id}, monthly))
        assert err.user_message == "This promotion code is not active: SOON"
    assert _counts(stripe_client, coupon) == (0,) and _counts(stripe_client, other, promo) == (0, 0)
    # the emulator's own clock has not reached either date: a customer without a test clock may still redeem them
    _on_subscription(stripe_client, _customer(stripe_client), {"coupon": coupon.id}, monthly)
    _on_subscription(stripe_client, _customer(stripe_client), {"promotion_code": promo.id}, monthly)
    assert _counts(stripe_client, coupon) == (1,) and _counts(stripe_client, other, promo) == (1, 1)


def test_a_request_that_fails_later_counts_no_redemption(stripe_client, monthly):
    coupon = stripe_client.v1.coupons.create(params={"percent_off": 10})
    promo = _promo(stripe_client, coupon, max_redemptions=1)
    customer = _customer(stripe_client)
    err = _refused(lambda: stripe_client.v1.subscriptions.create(params={
        "customer": customer.id, "items": [{"price": monthly.id}], "discounts": [{"promotion_code": promo.id}],
        "default_tax_rates": ["txr_missing"]}))
    assert err.error.param == "default_tax_rates[0]"
    assert _counts(stripe_client, coupon, promo) == (0, 0)
    assert stripe_client.v1.promotion_codes.retrieve(promo.id).active is True
    _on_subscription(stripe_client, customer, {"promotion_code": promo.id}, monthly)  # its one redemption is left
    assert _counts(stripe_client, coupon, promo) == (1, 1)


def test_one_request_cannot_redeem_a_code_past_its_limit(stripe_client):
    coupon = stripe_client.v1.coupons.create(params={"percent_off": 10})
    promo = _promo(stripe_client, coupon, max_redemptions=1)
    customer = _customer(stripe_client)
    err = _refused(lambda: stripe_client.v1.invoices.create(params={
        "customer": customer.id, "discounts": [{"promotion_code": promo.id}, {"promotion_code": promo.id}]}))
    assert err.error.param == "discounts[1][promotion_code]"
    assert _counts(stripe_client, coupon, promo) == (0, 0)


def test_the_active_filter_and_the_unique_code_rule_see_a_used_up_code_as_inactive(stripe_client):
    coupon = stripe_client.v1.coupons.create(params={"percent_off": 10})
    used = stripe_client.v1.promotion_codes.create(params={"promotion": {"type": "coupon", "coupon": coupon.id},
                                                           "code": "ONCEONLY", "max_redemptions": 1})
    customer = stripe_client.v1.customers.create(params={"payment_method": "pm_card_visa",
                                                         "invoice_settings": {"default_payment_method": "pm_card_visa"}})
    price = stripe_client.v1.prices.create(params={"currency": "usd", "unit_amount": 1000,
                                                   "product_data": {"name": "P"}, "recurring": {"interval": "month"}})
    stripe_client.v1.subscriptions.create(params={"customer": customer.id, "items": [{"price": price.id}],
                                                  "discounts": [{"promotion_code": used.id}]})
    assert stripe_client.v1.promotion_codes.retrieve(used.id).active is False
    active = [p.id for p in stripe_client.v1.promotion_codes.list(params={"active": True}).data]
    inactive = [p.id for p in stripe_client.v1.promotion_codes.list(params={"active": False}).data]
    assert used.id not in active and used.id in inactive
    # its code is free again for a new, active promotion code
    again = stripe_client.v1.promotion_codes.create(params={"promotion": {"type": "coupon", "coupon": coupon.id},
                                                            "code": "ONCEONLY"})
    assert again.active is True
