"""Finalising an invoice makes the PaymentIntent it is paid through, as on Stripe, through stripe-python.

Stripe's reference: the invoice's ``payment_intent`` "is generated when the invoice is finalized, and can then be
used to pay the invoice" (voiding cancels it); from 2025-03-31 that PaymentIntent is the invoice's default payment
("Stripe automatically creates a default InvoicePayment when the invoice is finalized") and its client_secret is the
invoice's ``confirmation_secret``. Paying it client-side, with the publishable key as stripe.js does, pays the
invoice.
"""

from __future__ import annotations

import pytest
import stripe

OLD = "2024-06-20"  # before 2025-03-31: the invoice names its PaymentIntent in ``payment_intent``
PK = "pk_test_emulator_123"


def _types(client: stripe.StripeClient, after: str | None = None) -> list[str]:
    params = {"limit": 100, **({"ending_before": after} if after else {})}
    return [e.type for e in reversed(client.v1.events.list(params=params).data)]


def _marker(client: stripe.StripeClient) -> str:
    return client.v1.events.list(params={"limit": 1}).data[0].id


@pytest.fixture
def browser(emulator) -> stripe.StripeClient:
    """What stripe.js does, with the publishable key: it needs the PaymentIntent's client_secret."""
    return stripe.StripeClient(PK, base_addresses={"api": emulator.url}, max_network_retries=0)


@pytest.fixture
def customer(stripe_client):
    return stripe_client.v1.customers.create(params={"email": "ada@example.com"})  # no card on file


def _draft(client: stripe.StripeClient, customer: str, amount: int, **fields) -> stripe.Invoice:
    invoice = client.v1.invoices.create(params={"customer": customer, **fields})
    if amount:
        client.v1.invoice_items.create(params={"customer": customer, "invoice": invoice.id, "amount": amount,
                                               "currency": "usd", "description": "Consulting"})
    return invoice


@pytest.mark.parametrize("collection", [{}, {"collection_method": "send_invoice", "days_until_due": 30}])
def test_a_finalized_invoice_is_paid_by_confirming_its_intent_with_the_publishable_key(
        stripe_client, browser, customer, collection):
    draft = _draft(stripe_client, customer.id, 2500, **collection)
    marker = _marker(stripe_client)
    opened = stripe_client.v1.invoices.finalize_invoice(draft.id, params={"expand": ["confirmation_secret",
                                                                                     "payments"]})
    [default] = opened.payments.data
    assert (default.is_default, default.status, default.amount_requested) == (True, "open", 2500)
    pi = stripe_client.v1.payment_intents.retrieve(default.payment.payment_intent)
    assert (pi.status, pi.amount, pi.currency, pi.customer) == ("requires_payment_method", 2500, "usd", customer.id)
    assert pi.description == f"Payment for Invoice {opened.number}" and pi.setup_future_usage is None
    assert (opened.confirmation_secret.type, opened.confirmation_secret.client_secret) == (
        "payment_intent", pi.client_secret)
    # made while finalising: the invoice.finalized event already names it
    assert _types(stripe_client, marker) == ["payment_intent.created", "invoice.finalized"]

    marker = _marker(stripe_client)
    secret = opened.confirmation_secret.client_secret
    seen = browser.v1.payment_intents.retrieve(pi.id, params={"client_secret": secret})
    assert (seen.amount, seen.status) == (2500, "requires_payment_method")
    done = browser.v1.payment_intents.confirm(pi.id, params={"client_secret": secret,
                                                             "payment_method": "pm_card_visa"})
    assert done.status == "succeeded"
    paid = stripe_client.v1.invoices.retrieve(draft.id, params={"expand": ["payments"]})
    assert (paid.status, paid.amount_paid, paid.amount_remaining) == ("paid", 2500, 0)
    assert [(p.id, p.status, p.amount_paid, p.payment.payment_intent) for p in paid.payments.data] == [
        (default.id, "paid", 2500, pi.id)]
    assert _types(stripe_client, marker) == ["charge.succeeded", "payment_intent.succeeded", "invoice_payment.paid",
                                             "invoice.paid", "invoice.payment_succeeded"]


def test_versions_name_the_finalized_invoice_intent_in_payment_intent_or_in_payments(stripe_client, customer):
    draft = _draft(stripe_client, customer.id, 1800)
    old = stripe_client.v1.invoices.finalize_invoice(draft.id, options={"stripe_version": OLD})
    assert old.payment_intent.startswith("pi_") and old.paid is False
    with pytest.raises(stripe.InvalidRequestError) as caught:  # no confirmation_secret before 2025-03-31
        stripe_client.v1.invoices.retrieve(draft.id, params={"expand": ["confirmation_secret"]},
                                           options={"stripe_version": OLD})
    assert caught.value.param == "expand"

    current = stripe_client.v1.invoices.retrieve(draft.id, params={"expand": ["payments"]})
    assert "payment_intent" not in current
    assert [(p.is_default, p.status, p.payment.payment_intent) for p in current.payments.data] == [
        (True, "open", old.payment_intent)]
    listed = stripe_client.v1.invoice_payments.list(params={"invoice": draft.id,
                                                            "payment": {"type": "payment_intent",
                                                                        "payment_intent": old.payment_intent}})
    assert [p.invoice for p in listed.data] == [draft.id]
    expanded = stripe_client.v1.invoices.retrieve(draft.id, params={"expand": ["payment_intent"]},
                                                  options={"stripe_version": OLD})
    assert (expanded.payment_intent.id, expanded.payment_intent.amount) == (old.payment_intent, 1800)


def test_a_zero_amount_invoice_is_paid_at_finalization_without_an_intent(stripe_client, customer):
    draft = _draft(stripe_client, customer.id, 0)
    marker = _marker(stripe_client)
    paid = stripe_client.v1.invoices.finalize_invoice(draft.id, params={"expand": ["confirmation_secret",
                                                                                   "payments"]})
    assert (paid.status, paid.amount_due, paid.confirmation_secret) == ("paid", 0, None)
    assert paid.payments.data == [] and stripe_client.v1.payment_intents.list().data == []
    assert _types(stripe_client, marker) == ["invoice.finalized", "invoice.paid", "invoice.payment_succeeded"]


def test_voiding_a_finalized_invoice_cancels_its_intent(stripe_client, browser, customer):
    draft = _draft(stripe_client, customer.id, 1200)
    opened = stripe_client.v1.invoices.finalize_invoice(draft.id, options={"stripe_version": OLD})
    stripe_client.v1.invoices.void_invoice(draft.id)
    pi = stripe_client.v1.payment_intents.retrieve(opened.payment_intent)
    assert (pi.status, pi.cancellation_reason) == ("canceled", "void_invoice")
    with pytest.raises(stripe.InvalidRequestError):  # stripe.js can no longer pay it
        browser.v1.payment_intents.confirm(pi.id, params={"client_secret": pi.client_secret,
                                                          "payment_method": "pm_card_visa"})
    assert stripe_client.v1.invoices.retrieve(draft.id).status == "void"


def test_pay_confirms_the_intent_finalizing_made(stripe_client, customer):
    draft = _draft(stripe_client, customer.id, 4200)
    made = stripe_client.v1.invoices.finalize_invoice(draft.id, options={"stripe_version": OLD}).payment_intent
    with pytest.raises(stripe.CardError):
        stripe_client.v1.invoices.pay(draft.id, params={"payment_method": "pm_card_chargeDeclined"})
    paid = stripe_client.v1.invoices.pay(draft.id, params={"payment_method": "pm_card_visa"},
                                         options={"stripe_version": OLD})
    assert (paid.status, paid.payment_intent, paid.amount_paid, paid.attempt_count) == ("paid", made, 4200, 2)
    assert [(pi.id, pi.status) for pi in stripe_client.v1.payment_intents.list().data] == [(made, "succeeded")]


def test_a_partial_payment_brings_the_default_intent_down_to_what_remains(stripe_client, browser, customer):
    draft = _draft(stripe_client, customer.id, 3000)
    opened = stripe_client.v1.invoices.finalize_invoice(draft.id, params={"expand": ["confirmation_secret"]})
    part = stripe_client.v1.payment_intents.create(params={
        "amount": 1000, "currency": "usd", "customer": customer.id, "payment_method": "pm_card_visa",
        "confirm": True})
    stripe_client.v1.invoices.attach_payment(draft.id, params={"payment_intent": part.id})
    default = stripe_client.v1.invoice_payments.list(params={"invoice": draft.id, "status": "open"}).data[0]
    assert (default.is_default, default.amount_requested) == (True, 2000)
    pi_id = default.payment.payment_intent
    assert stripe_client.v1.payment_intents.retrieve(pi_id).amount == 2000
    browser.v1.payment_intents.confirm(pi_id, params={"client_secret": opened.confirmation_secret.client_secret,
                                                      "payment_method": "pm_card_visa"})
    paid = stripe_client.v1.invoices.retrieve(draft.id)
    assert (paid.status, paid.amount_paid, paid.amount_remaining) == ("paid", 3000, 0)
