"""Discounts on one-off invoices and invoice items, and coupons limited to products (``applies_to``), through
stripe-python.

Stripe's reference: ``discounts`` on ``POST /v1/invoices`` (create, and update of a draft) and on
``POST /v1/invoiceitems`` takes ``{coupon}`` / ``{promotion_code}`` / ``{discount}``; an invoice created without it
inherits its customer's discount, ``""`` refuses it. Line item discounts are applied before invoice discounts;
``discountable=false`` items take no invoice discount. Each line shows what each discount took off it in
``discount_amounts``, the invoice the sums in ``total_discount_amounts``; totals, tax, amount due and the
PaymentIntent finalising makes follow.
"""

from __future__ import annotations

import calendar
from datetime import UTC, datetime

import pytest
import stripe

ACACIA = {"stripe_version": "2025-02-24.acacia"}  # the last version with a customer's coupon param
T0 = int(datetime(2026, 1, 10, 12, tzinfo=UTC).timestamp())


def _month_after(moment: int) -> int:
    when = datetime.fromtimestamp(moment, UTC)
    year, month = (when.year + 1, 1) if when.month == 12 else (when.year, when.month + 1)
    return int(when.replace(year=year, month=month,
                            day=min(when.day, calendar.monthrange(year, month)[1])).timestamp())


@pytest.fixture
def customer(stripe_client):
    return stripe_client.v1.customers.create(params={"email": "ada@example.com", "payment_method": "pm_card_visa",
                                                     "invoice_settings": {"default_payment_method": "pm_card_visa"}})


def _item(client: stripe.StripeClient, customer: str, invoice: str, amount: int | None = None, *,
          price: str | None = None, **fields) -> stripe.InvoiceItem:
    params = {"customer": customer, "invoice": invoice, **fields}
    params.update({"pricing": {"price": price}} if price else {"amount": amount, "currency": "usd"})
    return client.v1.invoice_items.create(params=params)


def _amounts(invoice: stripe.Invoice) -> list[list[dict]]:
    """Each line's ``discount_amounts``, in line order."""
    return [[d.to_dict() for d in line.discount_amounts] for line in invoice.lines.data]


def _totals(invoice: stripe.Invoice) -> list[dict]:
    return [d.to_dict() for d in invoice.total_discount_amounts]


def _product_price(client: stripe.StripeClient, name: str, amount: int, **recurring) -> stripe.Price:
    return client.v1.prices.create(params={"currency": "usd", "unit_amount": amount, "product_data": {"name": name},
                                           **({"recurring": recurring} if recurring else {})})


def test_percent_coupon_is_split_over_the_lines_and_the_intent_charges_the_discounted_amount(stripe_client, customer):
    coupon = stripe_client.v1.coupons.create(params={"percent_off": 25})
    draft = stripe_client.v1.invoices.create(params={"customer": customer.id, "discounts": [{"coupon": coupon.id}]})
    [discount_id] = draft.discounts
    assert discount_id.startswith("di_")
    _item(stripe_client, customer.id, draft.id, 1000)
    _item(stripe_client, customer.id, draft.id, 3000)
    invoice = stripe_client.v1.invoices.retrieve(draft.id, params={"expand": ["discounts"]})
    assert _amounts(invoice) == [[{"amount": 250, "discount": discount_id}], [{"amount": 750, "discount": discount_id}]]
    assert _totals(invoice) == [{"amount": 1000, "discount": discount_id}]
    assert (invoice.subtotal, invoice.total, invoice.amount_due, invoice.amount_remaining) == (4000, 3000, 3000, 3000)
    assert [line.discounts for line in invoice.lines.data] == [[], []]  # invoice-level: not the lines' own
    [expanded] = invoice.discounts
    assert (expanded.id, expanded.invoice, expanded.customer, expanded.subscription, expanded.end) == (
        discount_id, draft.id, customer.id, None, None)
    assert expanded.source.coupon == coupon.id
    assert stripe_client.v1.coupons.retrieve(coupon.id).times_redeemed == 1

    opened = stripe_client.v1.invoices.finalize_invoice(draft.id, params={"expand": ["payments"]})
    [payment] = opened.payments.data
    assert payment.amount_requested == 3000
    assert stripe_client.v1.payment_intents.retrieve(payment.payment.payment_intent).amount == 3000


def test_amount_coupon_is_capped_at_the_subtotal_and_tax_comes_after_it(stripe_client, customer):
    rate = stripe_client.v1.tax_rates.create(params={"display_name": "VAT", "percentage": 10, "inclusive": False})
    small = stripe_client.v1.coupons.create(params={"amount_off": 500, "currency": "usd"})
    draft = stripe_client.v1.invoices.create(params={"customer": customer.id, "discounts": [{"coupon": small.id}],
                                                     "default_tax_rates": [rate.id]})
    _item(stripe_client, customer.id, draft.id, 2000)
    invoice = stripe_client.v1.invoices.retrieve(draft.id)
    assert _amounts(invoice) == [[{"amount": 500, "discount": draft.discounts[0]}]]
    assert [t.taxable_amount for t in invoice.total_taxes] == [1500] and invoice.total_taxes[0].amount == 150
    assert (invoice.subtotal, invoice.total, invoice.amount_due) == (2000, 1650, 1650)

    big = stripe_client.v1.coupons.create(params={"amount_off": 5000, "currency": "usd"})
    capped = stripe_client.v1.invoices.create(params={"customer": customer.id, "discounts": [{"coupon": big.id}]})
    _item(stripe_client, customer.id, capped.id, 3000)
    invoice = stripe_client.v1.invoices.retrieve(capped.id)
    assert _totals(invoice) == [{"amount": 3000, "discount": capped.discounts[0]}]
    assert (invoice.total, invoice.amount_due) == (0, 0)


def test_promotion_code_becomes_the_invoices_discount(stripe_client, customer):
    coupon = stripe_client.v1.coupons.create(params={"percent_off": 10})
    promo = stripe_client.v1.promotion_codes.create(params={"promotion": {"type": "coupon", "coupon": coupon.id}})
    draft = stripe_client.v1.invoices.create(params={"customer": customer.id,
                                                     "discounts": [{"promotion_code": promo.id}]})
    _item(stripe_client, customer.id, draft.id, 5000)
    invoice = stripe_client.v1.invoices.retrieve(draft.id, params={"expand": ["discounts"]})
    assert invoice.discounts[0].promotion_code == promo.id and invoice.discounts[0].source.coupon == coupon.id
    assert (invoice.total, _totals(invoice)) == (4500, [{"amount": 500, "discount": invoice.discounts[0].id}])


def test_new_invoice_inherits_the_customers_discount_unless_refused(stripe_client):
    coupon = stripe_client.v1.coupons.create(params={"percent_off": 20, "duration": "forever"})
    customer = stripe_client.v1.customers.create(params={"coupon": coupon.id}, options=ACACIA)
    inherited = stripe_client.v1.invoices.create(params={"customer": customer.id})
    assert inherited.discounts == [customer.discount.id]  # the customer's discount itself, not a copy
    _item(stripe_client, customer.id, inherited.id, 1000)
    assert stripe_client.v1.invoices.retrieve(inherited.id).total == 800

    refused = stripe_client.v1.invoices.create(params={"customer": customer.id, "discounts": ""})
    _item(stripe_client, customer.id, refused.id, 1000)
    refused = stripe_client.v1.invoices.retrieve(refused.id)
    assert (refused.discounts, refused.total, _totals(refused)) == ([], 1000, [])
    assert stripe_client.v1.coupons.retrieve(coupon.id).times_redeemed == 1  # inheriting redeems nothing new


def test_customers_once_discount_is_spent_by_the_invoice_that_inherits_it(stripe_client):
    coupon = stripe_client.v1.coupons.create(params={"amount_off": 300, "currency": "usd", "duration": "once"})
    customer = stripe_client.v1.customers.create(params={"coupon": coupon.id}, options=ACACIA)
    first = stripe_client.v1.invoices.create(params={"customer": customer.id})
    _item(stripe_client, customer.id, first.id, 1000)
    assert stripe_client.v1.invoices.retrieve(first.id).total == 700
    second = stripe_client.v1.invoices.create(params={"customer": customer.id})
    assert second.discounts == []
    assert stripe_client.v1.customers.retrieve(customer.id).discount is None
    deleted = stripe_client.v1.events.list(params={"type": "customer.discount.deleted"}).data
    assert [e.data.object.id for e in deleted] == [customer.discount.id]


def test_non_discountable_item_takes_no_invoice_discount(stripe_client, customer):
    coupon = stripe_client.v1.coupons.create(params={"percent_off": 50})
    draft = stripe_client.v1.invoices.create(params={"customer": customer.id, "discounts": [{"coupon": coupon.id}]})
    _item(stripe_client, customer.id, draft.id, 1000)
    _item(stripe_client, customer.id, draft.id, 600, discountable=False)
    invoice = stripe_client.v1.invoices.retrieve(draft.id)
    assert [line.discountable for line in invoice.lines.data] == [True, False]
    assert _amounts(invoice) == [[{"amount": 500, "discount": draft.discounts[0]}], []]
    assert invoice.total == 1100


def test_item_discount_applies_to_its_line_before_the_invoices(stripe_client, customer):
    half = stripe_client.v1.coupons.create(params={"percent_off": 50})
    tenth = stripe_client.v1.coupons.create(params={"percent_off": 10})
    draft = stripe_client.v1.invoices.create(params={"customer": customer.id, "discounts": [{"coupon": tenth.id}]})
    own = _item(stripe_client, customer.id, draft.id, 1000, discounts=[{"coupon": half.id}],
                expand=["discounts"])
    [item_discount] = own.discounts
    assert (item_discount.invoice_item, item_discount.source.coupon) == (own.id, half.id)
    _item(stripe_client, customer.id, draft.id, 1000)
    invoice = stripe_client.v1.invoices.retrieve(draft.id)
    [shared] = invoice.discounts
    assert [line.discounts for line in invoice.lines.data] == [[item_discount.id], []]
    assert _amounts(invoice) == [[{"amount": 500, "discount": item_discount.id}, {"amount": 50, "discount": shared}],
                                 [{"amount": 100, "discount": shared}]]
    assert _totals(invoice) == [{"amount": 500, "discount": item_discount.id}, {"amount": 150, "discount": shared}]
    assert invoice.total == 1350

    # taking the item's discount off (an item update) recomputes its draft
    stripe_client.v1.invoice_items.update(own.id, params={"discounts": ""})
    invoice = stripe_client.v1.invoices.retrieve(draft.id)
    assert (invoice.total, _totals(invoice)) == (1800, [{"amount": 200, "discount": shared}])


def test_applies_to_products_limits_a_one_off_invoices_discount(stripe_client, customer):
    eligible = _product_price(stripe_client, "Seats", 2000)
    other = _product_price(stripe_client, "Support", 1000)
    percent = stripe_client.v1.coupons.create(params={"percent_off": 50,
                                                      "applies_to": {"products": [eligible.product]}})
    draft = stripe_client.v1.invoices.create(params={"customer": customer.id, "discounts": [{"coupon": percent.id}]})
    _item(stripe_client, customer.id, draft.id, price=eligible.id)
    _item(stripe_client, customer.id, draft.id, price=other.id)
    _item(stripe_client, customer.id, draft.id, 500)  # no price, so no product: not eligible
    invoice = stripe_client.v1.invoices.retrieve(draft.id)
    assert _amounts(invoice) == [[{"amount": 1000, "discount": draft.discounts[0]}], [], []]
    assert invoice.total == 2500

    # an amount off is taken once off the eligible lines together, at most what they come to
    amount = stripe_client.v1.coupons.create(params={"amount_off": 5000, "currency": "usd",
                                                     "applies_to": {"products": [eligible.product]}})
    capped = stripe_client.v1.invoices.create(params={"customer": customer.id, "discounts": [{"coupon": amount.id}]})
    _item(stripe_client, customer.id, capped.id, price=eligible.id)
    _item(stripe_client, customer.id, capped.id, price=other.id)
    invoice = stripe_client.v1.invoices.retrieve(capped.id)
    assert _amounts(invoice) == [[{"amount": 2000, "discount": capped.discounts[0]}], []]
    assert invoice.total == 1000


def test_applies_to_products_limits_a_subscriptions_discount_on_every_renewal(stripe_client):
    clock = stripe_client.v1.test_helpers.test_clocks.create(params={"frozen_time": T0})
    customer = stripe_client.v1.customers.create(params={
        "test_clock": clock.id, "payment_method": "pm_card_visa",
        "invoice_settings": {"default_payment_method": "pm_card_visa"}})
    seats = _product_price(stripe_client, "Seats", 2000, interval="month")
    support = _product_price(stripe_client, "Support", 1000, interval="month")
    coupon = stripe_client.v1.coupons.create(params={"percent_off": 50, "duration": "forever",
                                                     "applies_to": {"products": [seats.product]}})
    sub = stripe_client.v1.subscriptions.create(params={
        "customer": customer.id, "items": [{"price": seats.id}, {"price": support.id}],
        "discounts": [{"coupon": coupon.id}]})
    [discount_id] = sub.discounts
    preview = stripe_client.v1.invoices.create_preview(params={"subscription": sub.id})
    assert (preview.total, _totals(preview)) == (2000, [{"amount": 1000, "discount": discount_id}])

    stripe_client.v1.test_helpers.test_clocks.advance(clock.id, params={"frozen_time": _month_after(T0) + 7200})
    first, renewal = reversed(stripe_client.v1.invoices.list(params={"customer": customer.id}).data)
    assert renewal.billing_reason == "subscription_cycle" and renewal.status == "paid"
    for invoice in (first, renewal):
        by_price = {line.pricing.price_details.price: [d.to_dict() for d in line.discount_amounts]
                    for line in invoice.lines.data}
        assert by_price == {seats.id: [{"amount": 1000, "discount": discount_id}], support.id: []}
        assert (invoice.total, invoice.amount_paid) == (2000, 2000)


def test_unknown_coupon_is_refused_and_no_invoice_is_made(stripe_client, customer):
    with pytest.raises(stripe.InvalidRequestError) as raised:
        stripe_client.v1.invoices.create(params={"customer": customer.id, "discounts": [{"coupon": "nope"}]})
    assert (raised.value.code, raised.value.param) == ("resource_missing", "discounts[0][coupon]")
    assert "nope" in raised.value.user_message
    with pytest.raises(stripe.InvalidRequestError) as raised:
        stripe_client.v1.invoices.create(params={"customer": customer.id,
                                                 "discounts": [{"promotion_code": "promo_nope"}]})
    assert (raised.value.code, raised.value.param) == ("resource_missing", "discounts[0][promotion_code]")
    assert stripe_client.v1.invoices.list(params={"customer": customer.id}).data == []
    assert [e.type for e in stripe_client.v1.events.list(params={"type": "invoice.created"}).data] == []


def test_updating_a_drafts_discounts_recomputes_it_and_a_finalized_one_refuses(stripe_client, customer):
    coupon = stripe_client.v1.coupons.create(params={"percent_off": 40})
    draft = stripe_client.v1.invoices.create(params={"customer": customer.id})
    _item(stripe_client, customer.id, draft.id, 2500)
    assert stripe_client.v1.invoices.retrieve(draft.id).total == 2500
    updated = stripe_client.v1.invoices.update(draft.id, params={"discounts": [{"coupon": coupon.id}]})
    [discount_id] = updated.discounts
    assert (updated.total, updated.amount_due, _totals(updated)) == (1500, 1500, [{"amount": 1000,
                                                                                    "discount": discount_id}])
    kept = stripe_client.v1.invoices.update(draft.id, params={"discounts": [{"discount": discount_id}]})
    assert (kept.discounts, kept.total) == ([discount_id], 1500)
    with pytest.raises(stripe.InvalidRequestError) as raised:
        stripe_client.v1.invoices.update(draft.id, params={"discounts": [{"discount": "di_unknown"}]})
    assert raised.value.param == "discounts[0][discount]"
    cleared = stripe_client.v1.invoices.update(draft.id, params={"discounts": ""})
    assert (cleared.discounts, cleared.total, _totals(cleared)) == ([], 2500, [])

    stripe_client.v1.invoices.update(draft.id, params={"discounts": [{"coupon": coupon.id}]})
    stripe_client.v1.invoices.finalize_invoice(draft.id)
    with pytest.raises(stripe.InvalidRequestError) as raised:
        stripe_client.v1.invoices.update(draft.id, params={"discounts": ""})
    assert raised.value.param == "discounts"
    assert stripe_client.v1.invoices.retrieve(draft.id).total == 1500


def test_paying_a_discounted_invoice_charges_the_discounted_total(stripe_client, customer):
    coupon = stripe_client.v1.coupons.create(params={"amount_off": 1200, "currency": "usd"})
    draft = stripe_client.v1.invoices.create(params={"customer": customer.id, "discounts": [{"coupon": coupon.id}]})
    _item(stripe_client, customer.id, draft.id, 5000)
    stripe_client.v1.invoices.finalize_invoice(draft.id)
    paid = stripe_client.v1.invoices.pay(draft.id, params={"expand": ["payments"]})
    assert (paid.status, paid.amount_paid, paid.amount_remaining, paid.total) == ("paid", 3800, 0, 3800)
    pi = stripe_client.v1.payment_intents.retrieve(paid.payments.data[0].payment.payment_intent)
    assert (pi.status, pi.amount) == ("succeeded", 3800)
    assert stripe_client.v1.charges.list(params={"customer": customer.id}).data[0].amount == 3800
