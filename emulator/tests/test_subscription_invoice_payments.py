"""A subscription's invoice paid in parts (API 2025-05-28 partial payments), through the official stripe-python SDK.

Billing's invoices (first, renewal) are paid the same way as hand-made ones (``invoice_actions.record_payment``):
each attached PaymentIntent becomes an invoice payment, ``amount_remaining`` falls with each one, and the invoice
is ``paid`` only once nothing remains. Here the parts are paid through two Checkout Sessions in ``payment`` mode,
completed through the hosted page's endpoints, as a browser would.
"""

from __future__ import annotations

import httpx
import pytest
import stripe

CARD = {"email": "ada@example.com", "card_number": "4242 4242 4242 4242", "expiry": "12 / 34", "cvc": "123",
        "name": "Ada Lovelace"}
TOTAL = 12345  # odd, so the halves differ by a cent


@pytest.fixture
def member(stripe_client: stripe.StripeClient):
    customer = stripe_client.v1.customers.create(params={"email": "ada@example.com", "name": "Ada"})
    price = stripe_client.v1.prices.create(params={"currency": "usd", "unit_amount": TOTAL,
                                                  "recurring": {"interval": "year"},
                                                  "product_data": {"name": "Annual desk"}})
    sub = stripe_client.v1.subscriptions.create(params={
        "customer": customer.id, "items": [{"price": price.id}], "collection_method": "send_invoice",
        "days_until_due": 30})
    # the first invoice of a sent subscription stays a draft for an hour: finalised now, as an integration would
    stripe_client.v1.invoices.finalize_invoice(sub.latest_invoice)
    return customer, sub


def _paid_session(client: stripe.StripeClient, emulator, customer: str, amount: int):
    """A hosted payment-mode Checkout Session for ``amount``, completed on its page; returns it retrieved."""
    session = client.v1.checkout.sessions.create(params={
        "mode": "payment", "customer": customer, "success_url": "https://desk.test/paid?s={CHECKOUT_SESSION_ID}",
        "line_items": [{"quantity": 1, "price_data": {"currency": "usd", "unit_amount": amount,
                                                      "product_data": {"name": "Part of the annual invoice"}}}]})
    reply = httpx.post(f"{emulator.url}/_checkout/{session.id}/submit", json=dict(CARD)).json()
    assert reply["status"] == "complete", reply
    return client.v1.checkout.sessions.retrieve(session.id)


def _types(client: stripe.StripeClient, marker: str) -> list[str]:
    events = client.v1.events.list(params={"limit": 100, "ending_before": marker}).data
    return [e.type for e in reversed(events)]


def test_a_subscription_invoice_is_paid_in_two_halves_through_two_checkout_sessions(stripe_client, emulator, member):
    customer, sub = member
    invoice = stripe_client.v1.invoices.retrieve(sub.latest_invoice)
    assert (invoice.status, invoice.amount_due, invoice.amount_remaining) == ("open", TOTAL, TOTAL)
    # finalising made the PaymentIntent the hosted page pays through: the invoice's open default payment
    [default] = stripe_client.v1.invoice_payments.list(params={"invoice": invoice.id}).data
    assert (default.is_default, default.status, default.amount_requested) == (True, "open", TOTAL)
    first_half, second_half = TOTAL // 2, TOTAL - TOTAL // 2

    first = _paid_session(stripe_client, emulator, customer.id, first_half)
    marker = stripe_client.v1.events.list(params={"limit": 1}).data[0].id
    after_first = stripe_client.v1.invoices.attach_payment(invoice.id, params={"payment_intent": first.payment_intent})
    assert (after_first.status, after_first.amount_paid, after_first.amount_remaining) == ("open", first_half,
                                                                                        second_half)
    assert _types(stripe_client, marker) == ["invoice_payment.paid", "invoice.updated"]

    second = _paid_session(stripe_client, emulator, customer.id, second_half)
    marker = stripe_client.v1.events.list(params={"limit": 1}).data[0].id
    done = stripe_client.v1.invoices.attach_payment(invoice.id, params={"payment_intent": second.payment_intent,
                                                                        "expand": ["payments"]})
    assert (done.status, done.amount_paid, done.amount_remaining) == ("paid", TOTAL, 0)
    assert done.status_transitions.paid_at is not None
    # the attached parts paid it all, so its own PaymentIntent is canceled with the default payment
    assert _types(stripe_client, marker) == ["invoice_payment.paid", "invoice.paid", "invoice.payment_succeeded",
                                             "payment_intent.canceled"]
    assert [(p.amount_paid, p.payment.payment_intent, p.status, p.is_default) for p in done.payments.data] == [
        (None, default.payment.payment_intent, "canceled", True), (first_half, first.payment_intent, "paid", False),
        (second_half, second.payment_intent, "paid", False)]
    listed = stripe_client.v1.invoice_payments.list(params={"invoice": invoice.id}).data
    assert sorted(p.amount_paid for p in listed if p.status == "paid") == [first_half, second_half]
    one = stripe_client.v1.invoice_payments.retrieve(listed[0].id)
    assert (one.object, one.invoice, one.currency) == ("invoice_payment", invoice.id, "usd")


def test_attaching_more_than_remains_is_refused_and_changes_nothing(stripe_client, emulator, member):
    customer, sub = member
    first = _paid_session(stripe_client, emulator, customer.id, TOTAL // 2)
    stripe_client.v1.invoices.attach_payment(sub.latest_invoice, params={"payment_intent": first.payment_intent})
    whole = _paid_session(stripe_client, emulator, customer.id, TOTAL)  # the full amount a second time
    marker = stripe_client.v1.events.list(params={"limit": 1}).data[0].id
    with pytest.raises(stripe.InvalidRequestError) as caught:
        stripe_client.v1.invoices.attach_payment(sub.latest_invoice, params={"payment_intent": whole.payment_intent})
    error = caught.value
    # Stripe's invoice-state refusals carry no error code (code None), only type, param and message.
    assert (error.http_status, error.error.type, error.code, error.param) == (400, "invalid_request_error", None,
                                                                              "payment_intent")
    assert error.user_message == (f"The PaymentIntent's amount ({TOTAL}) is greater than the invoice's "
                                  f"amount_remaining ({TOTAL - TOTAL // 2}).")
    after = stripe_client.v1.invoices.retrieve(sub.latest_invoice, params={"expand": ["payments"]})
    assert (after.status, after.amount_paid, after.amount_remaining) == ("open", TOTAL // 2, TOTAL - TOTAL // 2)
    # the open default payment finalising made, then the one attached part
    assert [(p.is_default, p.status, p.payment.payment_intent == first.payment_intent)
            for p in after.payments.data] == [(True, "open", False), (False, "paid", True)]
    assert _types(stripe_client, marker) == []  # no event: nothing happened
    # The refused PaymentIntent is not tied to the invoice: it can still be attached elsewhere (or refunded).
    assert stripe_client.v1.payment_intents.retrieve(whole.payment_intent).status == "succeeded"


def test_a_void_subscription_invoice_can_neither_be_paid_nor_take_a_payment(stripe_client, emulator, member):
    customer, sub = member
    voided = stripe_client.v1.invoices.void_invoice(sub.latest_invoice)
    assert voided.status == "void"
    part = _paid_session(stripe_client, emulator, customer.id, 1000)
    for attempt in (lambda: stripe_client.v1.invoices.pay(voided.id, params={"payment_method": "pm_card_visa"}),
                    lambda: stripe_client.v1.invoices.attach_payment(voided.id,
                                                                     params={"payment_intent": part.payment_intent})):
        with pytest.raises(stripe.InvalidRequestError) as caught:
            attempt()
        assert (caught.value.http_status, caught.value.error.type, caught.value.code, caught.value.param) == (
            400, "invalid_request_error", None, "invoice")
        assert caught.value.user_message == "Voided invoices cannot be paid."
    after = stripe_client.v1.invoices.retrieve(voided.id)
    assert (after.status, after.amount_paid, after.amount_remaining) == ("void", 0, TOTAL)
    # only the default payment finalising opened, canceled by the void; nothing was attached
    assert [(p.is_default, p.status) for p in stripe_client.v1.invoice_payments.list(
        params={"invoice": voided.id}).data] == [(True, "canceled")]


def test_a_default_incomplete_invoice_paid_by_attached_parts_cancels_its_default_payment(stripe_client, member):
    customer, _ = member
    price = stripe_client.v1.prices.create(params={"currency": "usd", "unit_amount": 4000,
                                                  "recurring": {"interval": "month"}, "product_data": {"name": "Pro"}})
    sub = stripe_client.v1.subscriptions.create(params={"customer": customer.id, "items": [{"price": price.id}],
                                                        "payment_behavior": "default_incomplete"})
    invoice = stripe_client.v1.invoices.retrieve(sub.latest_invoice, params={"expand": ["payments"]})
    [default] = invoice.payments.data
    assert (default.status, default.is_default, default.amount_requested) == ("open", True, 4000)
    for amount in (1500, 2500):
        part = stripe_client.v1.payment_intents.create(params={
            "amount": amount, "currency": "usd", "customer": customer.id, "payment_method": "pm_card_visa",
            "confirm": True})
        stripe_client.v1.invoices.attach_payment(invoice.id, params={"payment_intent": part.id})
    done = stripe_client.v1.invoices.retrieve(invoice.id, params={"expand": ["payments"]})
    assert (done.status, done.amount_paid, done.amount_remaining) == ("paid", 4000, 0)
    assert [(p.is_default, p.status, p.amount_paid) for p in done.payments.data] == [
        (True, "canceled", None), (False, "paid", 1500), (False, "paid", 2500)]
    assert done.payments.data[0].status_transitions.canceled_at is not None


def test_a_subscription_paid_by_card_at_creation_records_one_default_payment(stripe_client, member):
    customer, _ = member
    card = stripe_client.v1.payment_methods.attach("pm_card_visa", params={"customer": customer.id})
    stripe_client.v1.customers.update(customer.id, params={"invoice_settings": {"default_payment_method": card.id}})
    price = stripe_client.v1.prices.create(params={"currency": "usd", "unit_amount": 900,
                                                  "recurring": {"interval": "month"}, "product_data": {"name": "Pro"}})
    sub = stripe_client.v1.subscriptions.create(params={"customer": customer.id, "items": [{"price": price.id}]})
    assert sub.status == "active"
    invoice = stripe_client.v1.invoices.retrieve(sub.latest_invoice, params={"expand": ["payments"]})
    assert (invoice.status, invoice.amount_paid, invoice.attempt_count) == ("paid", 900, 1)
    [payment] = invoice.payments.data
    assert (payment.is_default, payment.status, payment.amount_paid) == (True, "paid", 900)
    paid_by = stripe_client.v1.payment_intents.retrieve(payment.payment.payment_intent)
    assert (paid_by.status, paid_by.amount_received) == ("succeeded", 900)
    assert payment.id == "inpay_" + invoice.id.removeprefix("in_")


@pytest.mark.parametrize("how", ["attached payments", "out of band"])
def test_an_incomplete_subscription_becomes_active_when_its_first_invoice_is_paid_without_its_own_intent(
        stripe_client, emulator, how):
    customer = stripe_client.v1.customers.create(params={"email": "ada@example.com"})
    price = stripe_client.v1.prices.create(params={"currency": "usd", "unit_amount": TOTAL,
                                                  "recurring": {"interval": "month"},
                                                  "product_data": {"name": "Monthly desk"}})
    sub = stripe_client.v1.subscriptions.create(params={"customer": customer.id, "items": [{"price": price.id}],
                                                       "payment_behavior": "default_incomplete"})
    assert sub.status == "incomplete"
    marker = stripe_client.v1.events.list(params={"limit": 1}).data[0].id
    if how == "out of band":
        paid = stripe_client.v1.invoices.pay(sub.latest_invoice, params={"paid_out_of_band": True})
    else:
        for amount in (TOTAL // 2, TOTAL - TOTAL // 2):
            part = _paid_session(stripe_client, emulator, customer.id, amount)
            paid = stripe_client.v1.invoices.attach_payment(sub.latest_invoice,
                                                            params={"payment_intent": part.payment_intent})
    assert paid.status == "paid"
    assert stripe_client.v1.subscriptions.retrieve(sub.id).status == "active"
    updates = [e for e in stripe_client.v1.events.list(params={"limit": 100, "ending_before": marker}).data
               if e.type == "customer.subscription.updated"]
    assert [(e.data.object.status, e.data.previous_attributes["status"]) for e in updates] == [("active", "incomplete")]
    types = _types(stripe_client, marker)
    assert types.index("invoice.paid") < types.index("customer.subscription.updated")
