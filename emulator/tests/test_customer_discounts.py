"""Customer-level discounts: ``coupon`` / ``promotion_code`` on customers before basil, the customer's ``discount``,
``DELETE /v1/customers/{id}/discount``, their events, Billing applying them, and discounts running out on a clock."""

from __future__ import annotations

import calendar
from datetime import UTC, datetime

import pytest
import stripe

ACACIA = {"stripe_version": "2025-02-24.acacia"}  # the last version with a customer's coupon param
BASIL = {"stripe_version": "2025-03-31.basil"}
OLD_SHAPE = {"stripe_version": "2024-06-20"}  # the discount's whole coupon under ``coupon``
T0 = int(datetime(2026, 1, 10, 12, tzinfo=UTC).timestamp())


def _month_after(moment: int, months: int = 1) -> int:
    when = datetime.fromtimestamp(moment, UTC)
    for _ in range(months):
        year, month = (when.year + 1, 1) if when.month == 12 else (when.year, when.month + 1)
        when = when.replace(year=year, month=month, day=min(when.day, calendar.monthrange(year, month)[1]))
    return int(when.timestamp())


def _events(client: stripe.StripeClient, marker: str | None = None) -> list[stripe.Event]:
    """Events after ``marker`` (every event without one), oldest first."""
    params = {"limit": 100, **({"ending_before": marker} if marker else {})}
    return list(reversed(client.v1.events.list(params=params).data))


def _latest(client: stripe.StripeClient) -> str:
    return client.v1.events.list(params={"limit": 1}).data[0].id


def _price(client: stripe.StripeClient, amount: int = 2000) -> stripe.Price:
    return client.v1.prices.create(params={"currency": "usd", "unit_amount": amount, "product_data": {"name": "Pro"},
                                           "recurring": {"interval": "month"}})


def _customer(client: stripe.StripeClient, clock: stripe.test_helpers.TestClock | None = None, **params):
    params = {"payment_method": "pm_card_visa", "invoice_settings": {"default_payment_method": "pm_card_visa"},
              **params}
    if clock is not None:
        params["test_clock"] = clock.id
    return client.v1.customers.create(params=params, options=ACACIA)


def test_customer_coupon_becomes_its_discount_in_each_versions_shape(stripe_client):
    coupon = stripe_client.v1.coupons.create(params={"percent_off": 25, "duration": "repeating",
                                                     "duration_in_months": 3})
    customer = stripe_client.v1.customers.create(params={"email": "d@example.com", "coupon": coupon.id},
                                                 options=ACACIA)
    discount = customer.discount
    assert discount.id.startswith("di_") and discount.object == "discount"
    assert (discount.customer, discount.subscription, discount.invoice) == (customer.id, None, None)
    assert discount.coupon.id == coupon.id and discount.coupon.percent_off == 25  # before 2025-09-30: whole coupon
    assert discount.end > discount.start
    current = stripe_client.v1.customers.retrieve(customer.id)  # the SDK's own version: source.coupon
    assert current.discount.id == discount.id and current.discount.source.to_dict() == {"coupon": coupon.id,
                                                                                         "type": "coupon"}
    assert "coupon" not in current.discount.to_dict()
    assert stripe_client.v1.customers.retrieve(customer.id, options=OLD_SHAPE).discount.coupon.duration == "repeating"
    assert stripe_client.v1.coupons.retrieve(coupon.id).times_redeemed == 1
    types = [e.type for e in _events(stripe_client)]
    assert types.index("customer.discount.created") < types.index("customer.created")
    created = stripe_client.v1.events.list(params={"type": "customer.discount.created"}).data[0].data.object
    assert (created.id, created.customer, created.subscription) == (discount.id, customer.id, None)
    # a customer without one still shows null
    assert stripe_client.v1.customers.create().discount is None


def test_promotion_code_param_applies_its_coupon(stripe_client):
    coupon = stripe_client.v1.coupons.create(params={"amount_off": 300, "currency": "usd", "duration": "forever"})
    promo = stripe_client.v1.promotion_codes.create(params={"promotion": {"type": "coupon", "coupon": coupon.id}})
    customer = stripe_client.v1.customers.create(params={"promotion_code": promo.id}, options=ACACIA)
    assert customer.discount.promotion_code == promo.id and customer.discount.coupon.id == coupon.id
    assert customer.discount.end is None


@pytest.mark.parametrize("options", [BASIL, {}], ids=["basil", "sdk_default"])
@pytest.mark.parametrize("name", ["coupon", "promotion_code"])
def test_singular_coupon_params_are_unknown_from_basil_on(stripe_client, options, name):
    coupon = stripe_client.v1.coupons.create(params={"percent_off": 10})
    customer = stripe_client.v1.customers.create()
    with pytest.raises(stripe.InvalidRequestError) as err:
        stripe_client.v1.customers.create(params={name: coupon.id}, options=options)
    assert (err.value.code, err.value.param) == ("parameter_unknown", name)
    assert err.value.user_message == f"Received unknown parameter: {name}"
    with pytest.raises(stripe.InvalidRequestError) as err:
        stripe_client.v1.customers.update(customer.id, params={name: coupon.id}, options=options)
    assert err.value.code == "parameter_unknown"
    assert stripe_client.v1.customers.retrieve(customer.id).discount is None


def test_unknown_coupon_is_refused_and_changes_nothing(stripe_client):
    before = len(stripe_client.v1.customers.list(params={"limit": 100}).data)
    with pytest.raises(stripe.InvalidRequestError) as err:
        stripe_client.v1.customers.create(params={"email": "x@example.com", "coupon": "NOPE"}, options=ACACIA)
    assert (err.value.http_status, err.value.code, err.value.param) == (404, "resource_missing", "coupon")
    assert err.value.user_message == "No such coupon: 'NOPE'"
    assert len(stripe_client.v1.customers.list(params={"limit": 100}).data) == before
    customer = stripe_client.v1.customers.create(params={"name": "Old"})
    marker = _latest(stripe_client)
    with pytest.raises(stripe.InvalidRequestError) as err:
        stripe_client.v1.customers.update(customer.id, params={"name": "New", "promotion_code": "promo_nope"},
                                          options=ACACIA)
    assert (err.value.http_status, err.value.param) == (404, "promotion_code")
    unchanged = stripe_client.v1.customers.retrieve(customer.id)
    assert (unchanged.name, unchanged.discount) == ("Old", None) and _events(stripe_client, marker) == []


def test_switching_removing_and_deleting_the_customers_discount(stripe_client):
    first = stripe_client.v1.coupons.create(params={"percent_off": 10, "duration": "forever"})
    second = stripe_client.v1.coupons.create(params={"amount_off": 500, "currency": "usd", "duration": "forever"})
    customer = stripe_client.v1.customers.create(params={"coupon": first.id}, options=ACACIA)
    applied = customer.discount.id

    marker = _latest(stripe_client)  # another coupon: one discount replaced by another
    switched = stripe_client.v1.customers.update(customer.id, params={"coupon": second.id}, options=ACACIA)
    assert switched.discount.id != applied and switched.discount.coupon.id == second.id
    events = _events(stripe_client, marker)
    assert [e.type for e in events] == ["customer.discount.updated", "customer.updated"]
    assert events[0].data.previous_attributes["id"] == applied
    assert events[1].data.previous_attributes["discount"]["id"] == applied

    marker = _latest(stripe_client)  # "" removes it
    cleared = stripe_client.v1.customers.update(customer.id, params={"coupon": ""}, options=ACACIA)
    assert cleared.discount is None
    events = _events(stripe_client, marker)
    assert [e.type for e in events] == ["customer.discount.deleted", "customer.updated"]
    assert events[0].data.object.id == switched.discount.id and events[0].data.object.deleted is True

    again = stripe_client.v1.customers.update(customer.id, params={"coupon": first.id}, options=ACACIA)
    marker = _latest(stripe_client)  # DELETE /v1/customers/{id}/discount
    gone = stripe_client.v1.customers.delete_discount(customer.id)
    assert (gone.object, gone.deleted, gone.id, gone.customer) == ("discount", True, again.discount.id, customer.id)
    assert [e.type for e in _events(stripe_client, marker)] == ["customer.discount.deleted", "customer.updated"]
    assert stripe_client.v1.customers.retrieve(customer.id).discount is None
    with pytest.raises(stripe.InvalidRequestError) as none_left:
        stripe_client.v1.customers.delete_discount(customer.id)
    assert (none_left.value.http_status, none_left.value.code) == (404, "resource_missing")


def _invoice_totals(client: stripe.StripeClient, customer_id: str) -> list[int]:
    """The customer's invoices' totals, oldest first."""
    return [i.total for i in reversed(client.v1.invoices.list(params={"customer": customer_id}).data)]


def test_repeating_customer_discount_bills_its_months_then_ends_on_the_clock(stripe_client):
    clock = stripe_client.v1.test_helpers.test_clocks.create(params={"frozen_time": T0})
    coupon = stripe_client.v1.coupons.create(params={"percent_off": 25, "duration": "repeating",
                                                     "duration_in_months": 2})
    customer = _customer(stripe_client, clock, coupon=coupon.id)
    discount_id = customer.discount.id
    assert customer.discount.end == _month_after(T0, 2)
    sub = stripe_client.v1.subscriptions.create(params={"customer": customer.id, "items": [{"price": _price(
        stripe_client).id}]})
    assert sub.discounts == []  # the customer's discount is not the subscription's
    first = stripe_client.v1.invoices.retrieve(sub.latest_invoice)
    assert (first.total, first.discounts) == (1500, [discount_id])
    assert [d.to_dict() for d in first.total_discount_amounts] == [{"amount": 500, "discount": discount_id}]

    stripe_client.v1.test_helpers.test_clocks.advance(clock.id, params={"frozen_time": _month_after(T0) + 7200})
    assert _invoice_totals(stripe_client, customer.id) == [1500, 1500]
    assert stripe_client.v1.customers.retrieve(customer.id).discount.id == discount_id
    marker = _latest(stripe_client)
    stripe_client.v1.test_helpers.test_clocks.advance(clock.id, params={"frozen_time": _month_after(T0, 2) + 7200})
    assert _invoice_totals(stripe_client, customer.id) == [1500, 1500, 2000]
    types = [e.type for e in _events(stripe_client, marker)]
    assert types.count("customer.discount.deleted") == 1
    assert types.index("customer.discount.deleted") < types.index("invoice.created")
    deleted = stripe_client.v1.events.list(params={"type": "customer.discount.deleted"}).data[0].data.object
    assert (deleted.id, deleted.deleted, deleted.customer) == (discount_id, True, customer.id)
    assert stripe_client.v1.customers.retrieve(customer.id).discount is None


def test_once_customer_discount_applies_to_the_first_invoice_only(stripe_client):
    clock = stripe_client.v1.test_helpers.test_clocks.create(params={"frozen_time": T0})
    coupon = stripe_client.v1.coupons.create(params={"amount_off": 700, "currency": "usd", "duration": "once"})
    customer = _customer(stripe_client, clock, coupon=coupon.id)
    stripe_client.v1.subscriptions.create(params={"customer": customer.id, "items": [{"price": _price(
        stripe_client).id}]})
    marker = _latest(stripe_client)
    stripe_client.v1.test_helpers.test_clocks.advance(clock.id, params={"frozen_time": _month_after(T0) + 7200})
    assert _invoice_totals(stripe_client, customer.id) == [1300, 2000]
    assert "customer.discount.deleted" in [e.type for e in _events(stripe_client, marker)]
    assert stripe_client.v1.customers.retrieve(customer.id).discount is None


def test_subscriptions_own_discount_wins_over_the_customers(stripe_client):
    mine = stripe_client.v1.coupons.create(params={"percent_off": 50, "duration": "forever"})
    theirs = stripe_client.v1.coupons.create(params={"percent_off": 10, "duration": "forever"})
    customer = _customer(stripe_client, coupon=mine.id)
    price = _price(stripe_client)
    own = stripe_client.v1.subscriptions.create(params={"customer": customer.id, "items": [{"price": price.id}],
                                                        "discounts": [{"coupon": theirs.id}]})
    invoice = stripe_client.v1.invoices.retrieve(own.latest_invoice)
    assert (invoice.total, invoice.discounts) == (1800, own.discounts)
    plain = stripe_client.v1.subscriptions.create(params={"customer": customer.id, "items": [{"price": price.id}]})
    invoice = stripe_client.v1.invoices.retrieve(plain.latest_invoice, params={"expand": ["discounts"]})
    assert invoice.total == 1000 and invoice.discounts[0].customer == customer.id
    assert invoice.discounts[0].subscription is None
    # the preview of the next renewal takes the customer's off too
    preview = stripe_client.v1.invoices.create_preview(params={"subscription": plain.id})
    assert preview.total == 1000


def test_expired_subscription_discount_is_announced_and_removed(stripe_client):
    clock = stripe_client.v1.test_helpers.test_clocks.create(params={"frozen_time": T0})
    coupon = stripe_client.v1.coupons.create(params={"percent_off": 20, "duration": "repeating",
                                                     "duration_in_months": 1})
    customer = _customer(stripe_client, clock)
    sub = stripe_client.v1.subscriptions.create(params={"customer": customer.id, "items": [{"price": _price(
        stripe_client).id}], "discounts": [{"coupon": coupon.id}]})
    applied = sub.discounts[0]
    marker = _latest(stripe_client)
    stripe_client.v1.test_helpers.test_clocks.advance(clock.id, params={"frozen_time": _month_after(T0) + 7200})
    assert _invoice_totals(stripe_client, customer.id) == [1600, 2000]
    events = _events(stripe_client, marker)
    deleted = [e for e in events if e.type == "customer.discount.deleted"]
    assert len(deleted) == 1 and deleted[0].data.object.id == applied
    assert deleted[0].data.object.subscription == sub.id and deleted[0].data.object.deleted is True
    assert stripe_client.v1.subscriptions.retrieve(sub.id).discounts == []
