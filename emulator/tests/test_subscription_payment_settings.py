"""What a subscription passes on to the invoices it makes, through the official stripe-python SDK.

Stripe's reference: a subscription's ``payment_settings.payment_method_types`` and ``payment_method_options`` are
"provided to every invoice created by the subscription"; ``save_default_payment_method=on_subscription`` makes the
payment method that paid become the subscription's ``default_payment_method``; ``days_until_due`` is the number of
days a customer has to pay its invoices (``due_date``), renewals included. An invoice also shows the customer's
``tax_exempt`` and tax IDs (``customer_tax_ids``, kept as they were once it is finalised).
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import stripe

T0 = int(datetime(2026, 3, 2, 9, tzinfo=UTC).timestamp())
DAY = 86400


def _price(client: stripe.StripeClient, amount: int = 2000) -> stripe.Price:
    return client.v1.prices.create(params={"currency": "usd", "unit_amount": amount, "product_data": {"name": "Pro"},
                                           "recurring": {"interval": "month"}})


def _clock(client: stripe.StripeClient) -> stripe.test_helpers.TestClock:
    return client.v1.test_helpers.test_clocks.create(params={"frozen_time": T0})


def _advance(client: stripe.StripeClient, clock: stripe.test_helpers.TestClock, to: int) -> None:
    client.v1.test_helpers.test_clocks.advance(clock.id, params={"frozen_time": to})


def _invoices(client: stripe.StripeClient, sub_id: str) -> list[stripe.Invoice]:
    """The subscription's invoices, oldest first."""
    return list(reversed(client.v1.invoices.list(params={"subscription": sub_id, "limit": 100}).data))


def test_payment_method_types_and_options_go_onto_every_invoice_the_subscription_makes(stripe_client):
    clock = _clock(stripe_client)
    customer = stripe_client.v1.customers.create(params={"test_clock": clock.id, "email": "ada@example.com"})
    sub = stripe_client.v1.subscriptions.create(params={
        "customer": customer.id, "items": [{"price": _price(stripe_client).id}],
        "collection_method": "send_invoice", "days_until_due": 14,
        "payment_settings": {"payment_method_types": ["card", "us_bank_account"],
                             "payment_method_options": {"us_bank_account": {"verification_method": "instant"}}}})
    assert sub.payment_settings.payment_method_types == ["card", "us_bank_account"]
    assert sub.payment_settings.payment_method_options.us_bank_account.verification_method == "instant"
    assert sub.payment_settings.save_default_payment_method == "off"
    first = stripe_client.v1.invoices.retrieve(sub.latest_invoice)
    assert first.payment_settings.payment_method_types == ["card", "us_bank_account"]
    assert first.payment_settings.payment_method_options.us_bank_account.verification_method == "instant"
    # the PaymentIntent the sent invoice is paid through, made when Billing finalises it an hour later, offers them
    _advance(stripe_client, clock, T0 + 7200)
    payment = stripe_client.v1.invoice_payments.list(params={"invoice": first.id}).data[0]
    pi = stripe_client.v1.payment_intents.retrieve(payment.payment.payment_intent)
    assert sorted(pi.payment_method_types) == ["card", "us_bank_account"]
    # changed on the subscription: the next invoice (a renewal) has the new types
    stripe_client.v1.subscriptions.update(sub.id, params={"payment_settings": {"payment_method_types": ["card"]}})
    _advance(stripe_client, clock, T0 + 32 * DAY)
    renewal = _invoices(stripe_client, sub.id)[-1]
    assert renewal.billing_reason == "subscription_cycle"
    assert renewal.payment_settings.payment_method_types == ["card"]
    assert renewal.payment_settings.payment_method_options.us_bank_account.verification_method == "instant"


def test_an_unknown_payment_method_type_is_refused_and_changes_nothing(stripe_client):
    customer = stripe_client.v1.customers.create(params={"payment_method": "pm_card_visa",
                                                         "invoice_settings": {"default_payment_method": "pm_card_visa"}})
    price = _price(stripe_client)
    with pytest.raises(stripe.InvalidRequestError) as err:
        stripe_client.v1.subscriptions.create(params={
            "customer": customer.id, "items": [{"price": price.id}],
            "payment_settings": {"payment_method_types": ["card", "carrier_pigeon"]}})
    assert err.value.param == "payment_settings[payment_method_types][1]"
    assert stripe_client.v1.subscriptions.list(params={"customer": customer.id, "status": "all"}).data == []
    sub = stripe_client.v1.subscriptions.create(params={"customer": customer.id, "items": [{"price": price.id}]})
    with pytest.raises(stripe.InvalidRequestError):
        stripe_client.v1.subscriptions.update(sub.id, params={
            "payment_settings": {"payment_method_types": ["carrier_pigeon"]}})
    assert stripe_client.v1.subscriptions.retrieve(sub.id).payment_settings.payment_method_types is None


@pytest.mark.parametrize("save", ["on_subscription", "off"])
def test_save_default_payment_method_decides_whether_the_renewal_can_be_charged(stripe_client, save):
    """The integration Stripe's subscription guide builds: default_incomplete, the client confirms the first
    invoice's PaymentIntent; with on_subscription that card pays the renewals, with off the renewal has no card."""
    clock = _clock(stripe_client)
    customer = stripe_client.v1.customers.create(params={"test_clock": clock.id})
    sub = stripe_client.v1.subscriptions.create(params={
        "customer": customer.id, "items": [{"price": _price(stripe_client).id}],
        "payment_behavior": "default_incomplete", "payment_settings": {"save_default_payment_method": save}})
    assert (sub.status, sub.default_payment_method) == ("incomplete", None)
    payment = stripe_client.v1.invoice_payments.list(params={"invoice": sub.latest_invoice}).data[0]
    pi = stripe_client.v1.payment_intents.confirm(payment.payment.payment_intent,
                                                  params={"payment_method": "pm_card_visa"})
    assert pi.status == "succeeded"
    active = stripe_client.v1.subscriptions.retrieve(sub.id)
    assert active.status == "active"
    assert active.default_payment_method == (pi.payment_method if save == "on_subscription" else None)
    # the payment made one customer.subscription.updated, carrying both changes
    marker = stripe_client.v1.events.list(params={"type": "payment_intent.succeeded", "limit": 1}).data[0]
    updates = [e for e in stripe_client.v1.events.list(params={"ending_before": marker.id, "limit": 100}).data
               if e.type == "customer.subscription.updated" and e.data.object.id == sub.id]
    assert len(updates) == 1
    changed = set(updates[0].data.previous_attributes.to_dict())
    assert changed == ({"status", "default_payment_method"} if save == "on_subscription" else {"status"})
    _advance(stripe_client, clock, T0 + 32 * DAY)
    renewal = _invoices(stripe_client, sub.id)[-1]
    assert renewal.billing_reason == "subscription_cycle"
    if save == "on_subscription":
        assert (renewal.status, renewal.amount_paid) == ("paid", 2000)
        assert stripe_client.v1.subscriptions.retrieve(sub.id).status == "active"
    else:
        assert (renewal.status, renewal.amount_paid) == ("open", 0)
        assert stripe_client.v1.subscriptions.retrieve(sub.id).status == "past_due"


def test_paid_out_of_band_saves_no_payment_method(stripe_client):
    customer = stripe_client.v1.customers.create()
    sub = stripe_client.v1.subscriptions.create(params={
        "customer": customer.id, "items": [{"price": _price(stripe_client).id}],
        "payment_behavior": "default_incomplete",
        "payment_settings": {"save_default_payment_method": "on_subscription"}})
    stripe_client.v1.invoices.pay(sub.latest_invoice, params={"paid_out_of_band": True})
    active = stripe_client.v1.subscriptions.retrieve(sub.id)
    assert (active.status, active.default_payment_method) == ("active", None)


def test_send_invoice_renewals_are_due_days_until_due_after_they_are_made(stripe_client):
    clock = _clock(stripe_client)
    customer = stripe_client.v1.customers.create(params={"test_clock": clock.id})
    sub = stripe_client.v1.subscriptions.create(params={
        "customer": customer.id, "items": [{"price": _price(stripe_client).id}],
        "collection_method": "send_invoice", "days_until_due": 30})
    for day in (32, 63):
        _advance(stripe_client, clock, T0 + day * DAY)
    invoices = _invoices(stripe_client, sub.id)
    assert [i.billing_reason for i in invoices] == ["subscription_create", "subscription_cycle", "subscription_cycle"]
    assert [i.due_date - i.created for i in invoices] == [30 * DAY] * 3
    # one charged automatically has no due date
    auto = stripe_client.v1.customers.create(params={"payment_method": "pm_card_visa",
                                                     "invoice_settings": {"default_payment_method": "pm_card_visa"}})
    charged = stripe_client.v1.subscriptions.create(params={"customer": auto.id,
                                                            "items": [{"price": _price(stripe_client).id}]})
    assert stripe_client.v1.invoices.retrieve(charged.latest_invoice).due_date is None


def test_invoices_show_the_customers_tax_exemption_and_tax_ids_as_at_finalisation(stripe_client):
    customer = stripe_client.v1.customers.create(params={
        "tax_exempt": "reverse", "payment_method": "pm_card_visa",
        "invoice_settings": {"default_payment_method": "pm_card_visa"}})
    stripe_client.v1.customers.tax_ids.create(customer.id, params={"type": "eu_vat", "value": "DE123456789"})
    sub = stripe_client.v1.subscriptions.create(params={"customer": customer.id,
                                                        "items": [{"price": _price(stripe_client).id}]})
    billed = stripe_client.v1.invoices.retrieve(sub.latest_invoice)
    assert billed.customer_tax_exempt == "reverse"
    assert [(t.type, t.value) for t in billed.customer_tax_ids] == [("eu_vat", "DE123456789")]
    # a one-off invoice: a tax ID added while it is a draft is taken at finalisation; one added after is not
    draft = stripe_client.v1.invoices.create(params={"customer": customer.id})
    stripe_client.v1.invoice_items.create(params={"customer": customer.id, "invoice": draft.id, "amount": 500,
                                                  "currency": "usd"})
    assert [t.value for t in draft.customer_tax_ids] == ["DE123456789"]
    stripe_client.v1.customers.tax_ids.create(customer.id, params={"type": "us_ein", "value": "12-3456789"})
    final = stripe_client.v1.invoices.finalize_invoice(draft.id)
    assert [(t.type, t.value) for t in final.customer_tax_ids] == [("eu_vat", "DE123456789"),
                                                                    ("us_ein", "12-3456789")]
    stripe_client.v1.customers.tax_ids.create(customer.id, params={"type": "gb_vat", "value": "GB123456789"})
    assert len(stripe_client.v1.invoices.retrieve(draft.id).customer_tax_ids) == 2
