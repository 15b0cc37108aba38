"""Tax rates on invoices through stripe-python: invoice and invoice item rates, inclusive and exclusive, rounding,
discounts before tax, and the tax fields of each API version (``total_taxes`` from 2025-03-31, ``tax`` and
``total_tax_amounts`` before)."""

from __future__ import annotations

import pytest
import stripe

OLD = {"stripe_version": "2024-06-20"}
BASIL = {"stripe_version": "2025-03-31.basil"}


def _rate(client: stripe.StripeClient, percentage: str, inclusive: bool, name: str = "VAT") -> stripe.TaxRate:
    return client.v1.tax_rates.create(params={"display_name": name, "percentage": percentage, "inclusive": inclusive})


def _tax(rate: stripe.TaxRate, amount: int, taxable: int) -> dict:
    """One entry of basil's ``taxes`` / ``total_taxes`` for a manual tax rate."""
    return {"amount": amount, "tax_behavior": "inclusive" if rate.inclusive else "exclusive",
            "tax_rate_details": {"tax_rate": rate.id}, "taxability_reason": "not_available",
            "taxable_amount": taxable, "type": "tax_rate_details"}


def _legacy(rate: stripe.TaxRate, amount: int, taxable: int) -> dict:
    """One entry of ``tax_amounts`` / ``total_tax_amounts`` before 2025-03-31."""
    return {"amount": amount, "inclusive": rate.inclusive, "tax_rate": rate.id, "taxability_reason": None,
            "taxable_amount": taxable}


def _plain(obj: stripe.StripeObject) -> dict:
    return obj.to_dict()


@pytest.fixture
def customer(stripe_client):
    return stripe_client.v1.customers.create(params={
        "email": "tax@example.com", "payment_method": "pm_card_visa",
        "invoice_settings": {"default_payment_method": "pm_card_visa"}})


def test_invoice_default_rates_and_item_rates_inclusive_and_exclusive(stripe_client, customer):
    sales = _rate(stripe_client, "8.25", False, "Sales tax")
    vat = _rate(stripe_client, "20", True)
    ten = _rate(stripe_client, "10", False, "GST")
    invoice = stripe_client.v1.invoices.create(params={"customer": customer.id, "default_tax_rates": [sales.id]})
    assert [(r.object, r.id, r.percentage) for r in invoice.default_tax_rates] == [("tax_rate", sales.id, 8.25)]
    item = stripe_client.v1.invoice_items.create(params={"customer": customer.id, "invoice": invoice.id,
                                                         "amount": 1000, "currency": "usd", "tax_rates": [vat.id]})
    assert [(r.object, r.id, r.inclusive) for r in item.tax_rates] == [("tax_rate", vat.id, True)]
    stripe_client.v1.invoice_items.create(params={"customer": customer.id, "invoice": invoice.id, "amount": 999,
                                                  "currency": "usd"})  # no rates of its own: the invoice's apply
    stripe_client.v1.invoice_items.create(params={"customer": customer.id, "invoice": invoice.id, "amount": 1005,
                                                  "currency": "usd", "tax_rates": [ten.id]})
    draft = stripe_client.v1.invoices.retrieve(invoice.id)
    # inclusive: 1000 / 1.2 = 833.33 → 167 of tax carved out; exclusive 8.25 % of 999 = 82.4175 → 82;
    # 10 % of 1005 = 100.5 → 101 (rounded per line, half up)
    assert [line["taxes"] for line in _plain(draft)["lines"]["data"]] == [
        [_tax(vat, 167, 833)], [_tax(sales, 82, 999)], [_tax(ten, 101, 1005)]]
    assert (draft.subtotal, draft.subtotal_excluding_tax, draft.total, draft.total_excluding_tax,
            draft.amount_due) == (3004, 2837, 3187, 2837, 3187)
    assert _plain(draft)["total_taxes"] == [_tax(vat, 167, 833), _tax(sales, 82, 999), _tax(ten, 101, 1005)]

    old = stripe_client.v1.invoices.retrieve(invoice.id, options=OLD)
    assert old.tax == 350 and "total_taxes" not in old
    assert _plain(old)["total_tax_amounts"] == [
        _legacy(vat, 167, 833), _legacy(sales, 82, 999), _legacy(ten, 101, 1005)]
    first, second, _ = old.lines.data
    assert [r.id for r in first.tax_rates] == [vat.id] and second.tax_rates == []  # a line's own rates only
    assert (_plain(first)["tax_amounts"], first.amount_excluding_tax, first.unit_amount_excluding_tax) == (
        [_legacy(vat, 167, 833)], 833, "833")
    assert "tax_amounts" not in stripe_client.v1.invoices.retrieve(invoice.id, options=BASIL).lines.data[0]

    # the invoice's default rates can change while it is a draft; the lines without rates follow
    changed = stripe_client.v1.invoices.update(invoice.id, params={"default_tax_rates": [ten.id, sales.id]})
    assert _plain(changed.lines.data[1])["taxes"] == [_tax(ten, 100, 999), _tax(sales, 82, 999)]
    assert changed.total == 3004 + 100 + 82 + 101
    paid = stripe_client.v1.invoices.pay(invoice.id)
    assert (paid.status, paid.amount_paid, paid.amount_remaining) == ("paid", 3287, 0)
    intent = stripe_client.v1.payment_intents.list(params={"customer": customer.id}).data[0]
    assert intent.amount == 3287
    event = stripe_client.v1.events.list(params={"type": "invoice.paid"}).data[0]
    assert event.data.object.total == 3287 and len(event.data.object.total_taxes) == 3


def test_pending_items_keep_their_rates_and_bad_rate_ids_are_refused(stripe_client, customer):
    vat = _rate(stripe_client, "19", False)
    item = stripe_client.v1.invoice_items.create(params={"customer": customer.id, "amount": 2000, "currency": "eur",
                                                         "tax_rates": [vat.id]})
    invoice = stripe_client.v1.invoices.create(params={"customer": customer.id,
                                                       "pending_invoice_items_behavior": "include"})
    assert (invoice.total, _plain(invoice)["total_taxes"]) == (2380, [_tax(vat, 380, 2000)])
    cleared = stripe_client.v1.invoice_items.update(item.id, params={"tax_rates": ""})
    assert cleared.tax_rates == []
    assert stripe_client.v1.invoices.retrieve(invoice.id).total == 2000
    stripe_client.v1.tax_rates.update(vat.id, params={"display_name": "MwSt"})  # labels show as they are now
    again = stripe_client.v1.invoice_items.update(item.id, params={"tax_rates": [vat.id]})
    assert again.tax_rates[0].display_name == "MwSt"
    with pytest.raises(stripe.InvalidRequestError) as unknown:
        stripe_client.v1.invoices.create(params={"customer": customer.id, "default_tax_rates": ["txr_nope"]})
    assert (unknown.value.code, unknown.value.param) == ("resource_missing", "default_tax_rates[0]")
    with pytest.raises(stripe.InvalidRequestError) as unknown_item:
        stripe_client.v1.invoice_items.create(params={"customer": customer.id, "amount": 1, "currency": "eur",
                                                      "tax_rates": [vat.id, "txr_nope"]})
    assert unknown_item.value.param == "tax_rates[1]"
    stripe_client.v1.invoices.finalize_invoice(invoice.id)
    with pytest.raises(stripe.InvalidRequestError) as fixed:
        stripe_client.v1.invoices.update(invoice.id, params={"default_tax_rates": [vat.id]})
    assert fixed.value.code == "invoice_not_editable"


def _monthly(client: stripe.StripeClient, amount: int, name: str = "Pro") -> stripe.Price:
    return client.v1.prices.create(params={"currency": "usd", "unit_amount": amount, "recurring": {"interval": "month"},
                                           "product_data": {"name": name}})


def test_subscription_default_rates_and_item_rates_are_billed(stripe_client, customer):
    vat = _rate(stripe_client, "20", False)
    included = _rate(stripe_client, "25", True, "IVA")
    pro, seats = _monthly(stripe_client, 1000), _monthly(stripe_client, 1250, "Seats")
    sub = stripe_client.v1.subscriptions.create(params={
        "customer": customer.id, "default_tax_rates": [vat.id],
        "items": [{"price": pro.id}, {"price": seats.id, "tax_rates": [included.id]}]})
    assert [(r.object, r.id) for r in sub.default_tax_rates] == [("tax_rate", vat.id)]
    assert [[r.id for r in item.tax_rates] for item in sub["items"].data] == [[], [included.id]]
    item = stripe_client.v1.subscription_items.retrieve(sub["items"].data[1].id)
    assert [(r.object, r.percentage, r.inclusive) for r in item.tax_rates] == [("tax_rate", 25, True)]

    invoice = stripe_client.v1.invoices.retrieve(sub.latest_invoice)
    assert [r.id for r in invoice.default_tax_rates] == [vat.id]  # copied from the subscription
    # the item's own (inclusive) rate replaces the subscription's default on its line
    assert [line["taxes"] for line in _plain(invoice)["lines"]["data"]] == [
        [_tax(vat, 200, 1000)], [_tax(included, 250, 1000)]]
    assert (invoice.subtotal, invoice.subtotal_excluding_tax, invoice.total, invoice.total_excluding_tax) == (
        2250, 2000, 2450, 2000)
    assert (invoice.status, invoice.amount_due, invoice.amount_paid) == ("paid", 2450, 2450)
    assert stripe_client.v1.payment_intents.list(params={"customer": customer.id}).data[0].amount == 2450
    paid = stripe_client.v1.events.list(params={"type": "invoice.paid"}).data[0].data.object
    assert (paid.total, [t.amount for t in paid.total_taxes]) == (2450, [200, 250])

    old = stripe_client.v1.invoices.retrieve(sub.latest_invoice, options=OLD)
    assert (old.tax, _plain(old)["total_tax_amounts"]) == (450, [_legacy(vat, 200, 1000), _legacy(included, 250, 1000)])
    assert [[r.id for r in line.tax_rates] for line in old.lines.data] == [[], [included.id]]
    with pytest.raises(stripe.InvalidRequestError) as unknown:
        stripe_client.v1.subscriptions.create(params={"customer": customer.id,
                                                      "items": [{"price": pro.id, "tax_rates": ["txr_nope"]}]})
    assert (unknown.value.code, unknown.value.param) == ("resource_missing", "items[0][tax_rates][0]")


def test_discounts_come_off_before_tax(stripe_client, customer):
    vat = _rate(stripe_client, "20", False)
    tenth = stripe_client.v1.coupons.create(params={"percent_off": 10, "duration": "forever"})
    sub = stripe_client.v1.subscriptions.create(params={
        "customer": customer.id, "items": [{"price": _monthly(stripe_client, 1000).id}],
        "default_tax_rates": [vat.id], "discounts": [{"coupon": tenth.id}]})
    invoice = _plain(stripe_client.v1.invoices.retrieve(sub.latest_invoice))
    assert invoice["total_discount_amounts"][0]["amount"] == 100
    assert invoice["total_taxes"] == [_tax(vat, 180, 900)]  # 20 % of the discounted 900
    assert (invoice["subtotal"], invoice["total"], invoice["total_excluding_tax"], invoice["amount_paid"]) == (
        1000, 1080, 900, 1080)

    included = _rate(stripe_client, "20", True)
    half = stripe_client.v1.coupons.create(params={"percent_off": 50, "duration": "forever"})
    sub = stripe_client.v1.subscriptions.create(params={
        "customer": customer.id, "items": [{"price": _monthly(stripe_client, 1200, "Gross").id}],
        "default_tax_rates": [included.id], "discounts": [{"coupon": half.id}]})
    invoice = _plain(stripe_client.v1.invoices.retrieve(sub.latest_invoice))
    # the inclusive tax is recomputed on what remains after the discount: 600 / 1.2 → 100 of tax
    assert invoice["total_taxes"] == [_tax(included, 100, 500)]
    assert (invoice["subtotal"], invoice["subtotal_excluding_tax"], invoice["total"],
            invoice["total_excluding_tax"]) == (1200, 1000, 600, 500)


def test_prorations_previews_and_updates_carry_tax(stripe_client, customer):
    ten = _rate(stripe_client, "10", False, "GST")
    vat = _rate(stripe_client, "20", False)
    price = _monthly(stripe_client, 1000)
    sub = stripe_client.v1.subscriptions.create(params={"customer": customer.id,
                                                        "items": [{"price": price.id, "tax_rates": [ten.id]}]})
    item = sub["items"].data[0]
    middle = item.current_period_start + (item.current_period_end - item.current_period_start) // 2
    preview = stripe_client.v1.invoices.create_preview(params={"subscription": sub.id, "subscription_details": {
        "items": [{"id": item.id, "quantity": 2}], "proration_behavior": "always_invoice",
        "proration_date": middle}})
    lines = _plain(preview)["lines"]["data"]
    assert [(line["amount"], line["taxes"]) for line in lines] == [
        (-500, [_tax(ten, -50, -500)]), (1000, [_tax(ten, 100, 1000)])]  # the credit's tax is credited too
    assert (preview.total, _plain(preview)["total_taxes"]) == (550, [_tax(ten, 50, 500)])

    plain = stripe_client.v1.subscriptions.create(params={"customer": customer.id,
                                                          "items": [{"price": _monthly(stripe_client, 500).id}]})
    renewal = stripe_client.v1.invoices.create_preview(params={
        "subscription": plain.id, "subscription_details": {"default_tax_rates": [vat.id]}})
    assert (renewal.total, _plain(renewal)["total_taxes"]) == (600, [_tax(vat, 100, 500)])
    assert stripe_client.v1.invoices.create_preview(params={"subscription": plain.id}).total == 500
    updated = stripe_client.v1.subscriptions.update(plain.id, params={"default_tax_rates": [vat.id]})
    assert [r.id for r in updated.default_tax_rates] == [vat.id]
    assert stripe_client.v1.invoices.create_preview(params={"subscription": plain.id}).total == 600
    changed = stripe_client.v1.subscription_items.update(item.id, params={"tax_rates": [vat.id],
                                                                        "proration_behavior": "none"})
    assert [r.id for r in changed.tax_rates] == [vat.id]
    assert stripe_client.v1.invoices.create_preview(params={"subscription": sub.id}).total == 1200
