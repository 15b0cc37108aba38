"""Coupons and promotion codes, including the 2025-09-30 promotion-code shape change."""

from __future__ import annotations

import pytest
import stripe

OLD = "2025-08-27.basil"
NEW = "2025-09-30.clover"


def test_coupon_crud(stripe_client: stripe.StripeClient) -> None:
    pct = stripe_client.v1.coupons.create(params={"percent_off": 25.5, "duration": "repeating",
                                                  "duration_in_months": 3, "name": "Quarter off"})
    assert pct.percent_off == 25.5 and pct.duration_in_months == 3 and pct.valid is True and len(pct.id) == 8
    amt = stripe_client.v1.coupons.create(params={"id": "FIVE", "amount_off": 500, "currency": "USD"})
    assert amt.id == "FIVE" and amt.currency == "usd" and amt.duration == "once"
    renamed = stripe_client.v1.coupons.update("FIVE", params={"name": "Five off", "metadata": {"a": "b"}})
    assert renamed.name == "Five off" and renamed.metadata.to_dict() == {"a": "b"}
    assert [c.id for c in stripe_client.v1.coupons.list().data] == ["FIVE", pct.id]
    assert stripe_client.v1.coupons.delete("FIVE").deleted is True
    with pytest.raises(stripe.InvalidRequestError) as err:
        stripe_client.v1.coupons.retrieve("FIVE")
    assert err.value.user_message == "No such coupon: 'FIVE'"


@pytest.mark.parametrize("params, param", [
    ({"duration": "once"}, "percent_off"),
    ({"percent_off": 10, "amount_off": 5, "currency": "usd"}, "amount_off"),
    ({"amount_off": 5}, "currency"),
    ({"percent_off": 10, "duration": "repeating"}, "duration_in_months"),
    ({"percent_off": 101}, "percent_off"),
    ({"percent_off": "ten"}, "percent_off"),
])
def test_coupon_validation(stripe_client: stripe.StripeClient, params: dict, param: str) -> None:
    with pytest.raises(stripe.InvalidRequestError) as err:
        stripe_client.v1.coupons.create(params=params)
    assert err.value.param == param


def test_promotion_code_new_shape(stripe_client: stripe.StripeClient) -> None:
    coupon = stripe_client.v1.coupons.create(params={"percent_off": 20})
    promo = stripe_client.v1.promotion_codes.create(
        params={"promotion": {"type": "coupon", "coupon": coupon.id}, "code": "FALL20"}, options={"stripe_version": NEW})
    data = promo.to_dict()
    assert data["promotion"] == {"coupon": coupon.id, "type": "coupon"} and "coupon" not in data
    assert promo.id.startswith("promo_") and promo.active is True and promo.code == "FALL20"
    expanded = stripe_client.v1.promotion_codes.retrieve(promo.id, params={"expand": ["promotion.coupon"]},
                                                         options={"stripe_version": NEW})
    assert expanded.promotion.coupon.percent_off == 20
    with pytest.raises(stripe.InvalidRequestError) as err:
        stripe_client.v1.promotion_codes.create(params={"coupon": coupon.id}, options={"stripe_version": NEW})
    assert err.value.param == "coupon" and "unknown parameter" in err.value.user_message


def test_promotion_code_old_shape(stripe_client: stripe.StripeClient) -> None:
    coupon = stripe_client.v1.coupons.create(params={"amount_off": 300, "currency": "usd"})
    promo = stripe_client.v1.promotion_codes.create(params={"coupon": coupon.id}, options={"stripe_version": OLD})
    data = promo.to_dict()
    assert "promotion" not in data and data["coupon"]["id"] == coupon.id and data["coupon"]["amount_off"] == 300
    assert promo.code.isupper() and len(promo.code) == 8
    # The same object read at the newer version has the newer shape.
    assert stripe_client.v1.promotion_codes.retrieve(promo.id, options={"stripe_version": NEW}).promotion.coupon == coupon.id
    with pytest.raises(stripe.InvalidRequestError) as err:
        stripe_client.v1.promotion_codes.create(params={"promotion": {"type": "coupon", "coupon": coupon.id}},
                                                options={"stripe_version": OLD})
    assert err.value.param == "promotion"
    with pytest.raises(stripe.InvalidRequestError) as err:
        stripe_client.v1.promotion_codes.create(params={"coupon": "nope"}, options={"stripe_version": OLD})
    assert err.value.http_status == 404 and err.value.param == "coupon"


def test_promotion_code_list_update_and_unique_active_code(stripe_client: stripe.StripeClient) -> None:
    coupon = stripe_client.v1.coupons.create(params={"percent_off": 10})
    customer = stripe_client.v1.customers.create(params={"email": "p@example.com"})
    make = lambda **p: stripe_client.v1.promotion_codes.create(params={"promotion": {"type": "coupon", "coupon": coupon.id}, **p})
    first = make(code="SPRING", customer=customer.id, restrictions={"minimum_amount": 1000,
                                                                    "minimum_amount_currency": "usd"})
    assert first.restrictions.minimum_amount == 1000 and first.customer == customer.id
    with pytest.raises(stripe.InvalidRequestError) as err:
        make(code="spring")
    assert err.value.param == "code"
    stripe_client.v1.promotion_codes.update(first.id, params={"active": False})
    second = make(code="SPRING")
    found = stripe_client.v1.promotion_codes.list(params={"code": "spring", "active": True})
    assert [p.id for p in found.data] == [second.id]
    by_customer = stripe_client.v1.promotion_codes.list(params={"customer": customer.id, "expand": ["data.customer"]})
    assert [p.customer.email for p in by_customer.data] == ["p@example.com"]
    with pytest.raises(stripe.InvalidRequestError):
        stripe_client.v1.promotion_codes.update(first.id, params={"active": True})  # would be a second active SPRING


def test_coupon_validity_follows_the_clock(stripe_client: stripe.StripeClient, emulator) -> None:
    now = emulator.emulator.clock.now()
    coupon = stripe_client.v1.coupons.create(params={"percent_off": 10, "redeem_by": now + 3600})
    assert coupon.valid is True
    emulator.emulator.clock.advance(7200)
    assert stripe_client.v1.coupons.retrieve(coupon.id).valid is False
    with pytest.raises(stripe.InvalidRequestError) as err:
        stripe_client.v1.coupons.create(params={"percent_off": 10, "redeem_by": now})
    assert err.value.param == "redeem_by"


def _subscribed(client: stripe.StripeClient, coupon: stripe.Coupon) -> stripe.Subscription:
    """A two-item monthly subscription ($20 + $10) with ``coupon``, its first invoice paid by card."""
    customer = client.v1.customers.create(params={"payment_method": "pm_card_visa",
                                                  "invoice_settings": {"default_payment_method": "pm_card_visa"}})
    prices = [client.v1.prices.create(params={"currency": "usd", "unit_amount": amount,
                                              "recurring": {"interval": "month"}, "product_data": {"name": name}})
              for amount, name in ((2000, "Seats"), (1000, "Support"))]
    return client.v1.subscriptions.create(params={"customer": customer.id, "discounts": [{"coupon": coupon.id}],
                                                  "items": [{"price": p.id} for p in prices]})


@pytest.mark.parametrize("coupon_params, shares", [
    ({"percent_off": 10}, [200, 100]),
    ({"amount_off": 500, "currency": "usd"}, [333, 167]),  # split by line amount, whole cents summing to the total
])
def test_subscription_invoice_lines_carry_their_share_of_the_discount(stripe_client, coupon_params, shares):
    sub = _subscribed(stripe_client, stripe_client.v1.coupons.create(params=coupon_params))
    discount_id = sub.discounts[0]
    assert discount_id.startswith("di_")
    invoice = stripe_client.v1.invoices.retrieve(sub.latest_invoice)
    assert invoice.discounts == [discount_id]
    assert [d.to_dict() for d in invoice.total_discount_amounts] == [{"amount": sum(shares), "discount": discount_id}]
    assert (invoice.subtotal, invoice.total) == (3000, 3000 - sum(shares))
    lines = stripe_client.v1.invoices.line_items.list(invoice.id).data
    assert [[d.to_dict() for d in line.discount_amounts] for line in lines] == [
        [{"amount": share, "discount": discount_id}] for share in shares]
    assert all(line.discounts == [] for line in lines)  # line-level discounts only; this one is the invoice's


# Field names of Stripe's published example discount (its OpenAPI fixtures), at the current API version.
DISCOUNT_FIELDS = {"checkout_session", "customer", "customer_account", "end", "id", "invoice", "invoice_item", "object",
                   "promotion_code", "source", "start", "subscription", "subscription_item"}


def test_subscription_and_invoice_discounts_expand_to_discount_objects(stripe_client):
    coupon = stripe_client.v1.coupons.create(params={"percent_off": 10, "duration": "repeating",
                                                     "duration_in_months": 3})
    promo = stripe_client.v1.promotion_codes.create(params={"promotion": {"type": "coupon", "coupon": coupon.id}})
    sub = _subscribed(stripe_client, coupon)
    sub = stripe_client.v1.subscriptions.update(sub.id, params={"discounts": [{"promotion_code": promo.id}]})
    expanded = stripe_client.v1.subscriptions.retrieve(sub.id, params={"expand": ["discounts.promotion_code"]})
    discount = expanded.discounts[0]
    assert set(discount.to_dict()) == DISCOUNT_FIELDS and discount.id == sub.discounts[0]
    assert (discount.object, discount.subscription, discount.customer, discount.invoice) == (
        "discount", sub.id, sub.customer, None)
    assert discount.source.to_dict() == {"coupon": coupon.id, "type": "coupon"}
    assert discount.promotion_code.code == promo.code and discount.end > discount.start
    old = stripe_client.v1.subscriptions.retrieve(sub.id, params={"expand": ["discounts"]},
                                                  options={"stripe_version": OLD})
    assert old.discounts[0].coupon.percent_off == 10 and "source" not in old.discounts[0]
    # an invoice's discounts, its discount amounts' discounts and its lines' (a renewal's preview bills the new one)
    first = _subscribed(stripe_client, coupon)
    paths = ["discounts", "total_discount_amounts.discount", "lines.data.discount_amounts.discount",
             "lines.data.discounts"]
    invoice = stripe_client.v1.invoices.retrieve(first.latest_invoice, params={"expand": paths})
    assert [d.id for d in invoice.discounts] == first.discounts
    assert invoice.total_discount_amounts[0].discount.subscription == first.id
    assert {a.discount.id for line in invoice.lines.data for a in line.discount_amounts} == set(first.discounts)
    nested = stripe_client.v1.subscriptions.retrieve(first.id, params={"expand": ["latest_invoice.discounts",
                                                                                 "items.data.discounts"]})
    assert nested.latest_invoice.discounts[0].source.coupon == coupon.id
    lines = stripe_client.v1.invoices.line_items.list(first.latest_invoice,
                                                      params={"expand": ["data.discount_amounts.discount"]})
    assert lines.data[0].discount_amounts[0].discount.object == "discount"
    with pytest.raises(stripe.InvalidRequestError) as err:  # still only what the object has
        stripe_client.v1.subscriptions.retrieve(first.id, params={"expand": ["discount"]})
    assert err.value.user_message == "This property cannot be expanded (discount)."


def _discount_events(client: stripe.StripeClient, marker: str | None = None) -> list[tuple[str, str, bool]]:
    """(type, discount id, deleted) of the customer.discount.* events after ``marker``, oldest first."""
    params = {"limit": 100, **({"ending_before": marker} if marker else {})}
    return [(e.type, e.data.object.id, bool(e.data.object.to_dict().get("deleted"))) for e in
            reversed(client.v1.events.list(params=params).data) if e.type.startswith("customer.discount.")]


def _latest_event(client: stripe.StripeClient) -> str:
    return client.v1.events.list(params={"limit": 1}).data[0].id


def test_subscription_discounts_announce_customer_discount_events_in_stripes_order(stripe_client):
    first = stripe_client.v1.coupons.create(params={"percent_off": 10, "duration": "forever"})
    second = stripe_client.v1.coupons.create(params={"amount_off": 300, "currency": "usd", "duration": "once"})
    sub = _subscribed(stripe_client, first)
    applied = sub.discounts[0]
    assert _discount_events(stripe_client) == [("customer.discount.created", applied, False)]
    created = stripe_client.v1.events.list(params={"type": "customer.discount.created"}).data[0].data.object
    assert (created.object, created.subscription, created.customer, created.source.coupon) == (
        "discount", sub.id, sub.customer, first.id)
    types = [e.type for e in reversed(stripe_client.v1.events.list(params={"limit": 100}).data)]
    assert types.index("customer.discount.created") < types.index("customer.subscription.created")

    marker = _latest_event(stripe_client)  # switching coupons: one discount replaced by another
    switched = stripe_client.v1.subscriptions.update(sub.id, params={"discounts": [{"coupon": second.id}]})
    assert _discount_events(stripe_client, marker) == [("customer.discount.updated", switched.discounts[0], False)]
    updated = stripe_client.v1.events.list(params={"type": "customer.discount.updated"}).data[0]
    assert updated.data.object.source.coupon == second.id
    assert updated.data.previous_attributes["id"] == applied
    after = [e.type for e in reversed(stripe_client.v1.events.list(params={"ending_before": marker}).data)]
    assert after == ["customer.discount.updated", "customer.subscription.updated"]

    marker = _latest_event(stripe_client)  # keeping the discount it has: nothing to announce
    kept = stripe_client.v1.subscriptions.update(sub.id, params={"discounts": [{"discount": switched.discounts[0]}],
                                                                 "metadata": {"k": "v"}})
    assert kept.discounts == switched.discounts and _discount_events(stripe_client, marker) == []

    marker = _latest_event(stripe_client)  # removing it with discounts=""
    cleared = stripe_client.v1.subscriptions.update(sub.id, params={"discounts": ""})
    assert cleared.discounts == []
    assert _discount_events(stripe_client, marker) == [("customer.discount.deleted", switched.discounts[0], True)]

    again = stripe_client.v1.subscriptions.update(sub.id, params={"discounts": [{"coupon": first.id}]})
    marker = _latest_event(stripe_client)  # and with DELETE /v1/subscriptions/{id}/discount
    gone = stripe_client.v1.subscriptions.delete_discount(sub.id)
    assert (gone.object, gone.deleted, gone.id) == ("discount", True, again.discounts[0])
    after = [e.type for e in reversed(stripe_client.v1.events.list(params={"ending_before": marker}).data)]
    assert after == ["customer.discount.deleted", "customer.subscription.updated"]
    assert stripe_client.v1.subscriptions.retrieve(sub.id).discounts == []
    with pytest.raises(stripe.InvalidRequestError) as none_left:
        stripe_client.v1.subscriptions.delete_discount(sub.id)
    assert none_left.value.http_status == 404
    with pytest.raises(stripe.InvalidRequestError) as unknown:
        stripe_client.v1.subscriptions.update(sub.id, params={"discounts": [{"discount": "di_missing"}]})
    assert unknown.value.param == "discounts[0][discount]"


def test_coupon_update_adds_currency_options_and_keeps_the_earlier_ones(stripe_client: stripe.StripeClient) -> None:
    coupon = stripe_client.v1.coupons.create(params={"amount_off": 500, "currency": "usd",
                                                     "currency_options": {"eur": {"amount_off": 450}}})
    stripe_client.v1.coupons.update(coupon.id, params={"currency_options": {"gbp": {"amount_off": 400}}})
    got = stripe_client.v1.coupons.retrieve(coupon.id, params={"expand": ["currency_options"]})
    assert {c: o["amount_off"] for c, o in got.currency_options.to_dict().items()} == {"eur": 450, "gbp": 400}
