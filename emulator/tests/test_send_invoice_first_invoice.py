"""A ``send_invoice`` subscription's first invoice, finalised an hour after it is made, through stripe-python.

Stripe's docs (subscription invoices, "New subscription invoices"): the invoice a new subscription makes is
finalised at once when it is charged automatically, "or one hour later" with ``collection_method=send_invoice``.
Until then it is a draft whose ``automatically_finalizes_at`` is ``created + 3600``, and the subscription is
already ``active``. A test clock advancing past that time finalises it, as ``POST /v1/invoices/{id}/finalize`` or
``/send`` (which finalises a draft before sending it) do earlier. Finalising gives it its number and the
PaymentIntent the customer pays through (offering the subscription's payment method types); a card on file is
never charged. A first invoice with nothing due (a trial's) is still finalised, and so paid, at once.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import stripe

T0 = int(datetime(2026, 3, 2, 9, tzinfo=UTC).timestamp())
HOUR = 3600
DAY = 86400
TYPES = ["card", "us_bank_account"]


def _events(client: stripe.StripeClient, marker: str) -> list[stripe.Event]:
    """The events after ``marker``, oldest first."""
    return list(reversed(client.v1.events.list(params={"limit": 100, "ending_before": marker}).data))


def _marker(client: stripe.StripeClient) -> str:
    return client.v1.events.list(params={"limit": 1}).data[0].id


def _advance(client: stripe.StripeClient, clock_id: str, to: int) -> None:
    client.v1.test_helpers.test_clocks.advance(clock_id, params={"frozen_time": to})


@pytest.fixture
def clocked(stripe_client: stripe.StripeClient):
    """A clock at T0, its customer with a card on file (which a sent invoice must never charge), a daily price."""
    clock = stripe_client.v1.test_helpers.test_clocks.create(params={"frozen_time": T0})
    customer = stripe_client.v1.customers.create(params={
        "test_clock": clock.id, "email": "ada@example.com", "payment_method": "pm_card_visa",
        "invoice_settings": {"default_payment_method": "pm_card_visa"}})
    price = stripe_client.v1.prices.create(params={"currency": "usd", "unit_amount": 4200, "product_data": {
        "name": "Desk"}, "recurring": {"interval": "day"}})
    return clock, customer, price


def _subscribe(client: stripe.StripeClient, customer: stripe.Customer, price: stripe.Price,
               **more: object) -> stripe.Subscription:
    return client.v1.subscriptions.create(params={
        "customer": customer.id, "items": [{"price": price.id}], "collection_method": "send_invoice",
        "days_until_due": 30, "payment_settings": {"payment_method_types": TYPES}, **more})


def _never_charged(client: stripe.StripeClient, customer: stripe.Customer, sub_id: str) -> None:
    assert client.v1.charges.list(params={"customer": customer.id}).data == []
    assert client.v1.subscriptions.retrieve(sub_id).status == "active"


def _open_with_its_intent(client: stripe.StripeClient, invoice_id: str, finalized_at: int) -> stripe.Invoice:
    """The invoice is open since ``finalized_at`` with a number, its due date unchanged, and an unconfirmed
    PaymentIntent for all of it offering the subscription's payment method types."""
    invoice = client.v1.invoices.retrieve(invoice_id, params={"expand": ["payments"]})
    assert (invoice.status, invoice.status_transitions.finalized_at, invoice.automatically_finalizes_at) == (
        "open", finalized_at, None)
    assert invoice.number and invoice.due_date == T0 + 30 * DAY
    assert (invoice.amount_due, invoice.amount_paid, invoice.attempt_count) == (4200, 0, 0)
    [default] = invoice.payments.data
    assert (default.is_default, default.status, default.amount_requested) == (True, "open", 4200)
    pi = client.v1.payment_intents.retrieve(default.payment.payment_intent)
    assert (pi.status, pi.amount, pi.customer, pi.description) == (
        "requires_payment_method", 4200, invoice.customer, f"Payment for Invoice {invoice.number}")
    assert sorted(pi.payment_method_types) == TYPES
    return invoice


def test_the_first_invoice_is_a_draft_for_an_hour_and_the_subscription_active_at_once(stripe_client, clocked):
    _, customer, price = clocked
    marker = _marker(stripe_client)
    sub = _subscribe(stripe_client, customer, price)
    assert sub.status == "active"
    invoice = stripe_client.v1.invoices.retrieve(sub.latest_invoice, params={"expand": ["payments"]})
    assert (invoice.status, invoice.number, invoice.billing_reason, invoice.created) == (
        "draft", None, "subscription_create", T0)
    assert invoice.automatically_finalizes_at == T0 + HOUR
    assert invoice.due_date == T0 + 30 * DAY
    assert invoice.status_transitions.finalized_at is None
    assert invoice.payments.data == []  # no PaymentIntent before it is finalised
    assert stripe_client.v1.payment_intents.list(params={"customer": customer.id}).data == []
    events = _events(stripe_client, marker)
    assert [e.type for e in events] == ["customer.subscription.created", "invoice.created",
                                        "customer.subscription.updated"]
    created = events[1].data.object
    assert (created.id, created.status, created.automatically_finalizes_at) == (invoice.id, "draft", T0 + HOUR)
    assert events[2].data.object.status == "active"
    _never_charged(stripe_client, customer, sub.id)


def test_a_clock_advance_past_the_hour_finalises_it_and_half_an_hour_does_not(stripe_client, clocked):
    clock, customer, price = clocked
    sub = _subscribe(stripe_client, customer, price)
    marker = _marker(stripe_client)
    _advance(stripe_client, clock.id, T0 + HOUR // 2)
    assert stripe_client.v1.invoices.retrieve(sub.latest_invoice).status == "draft"
    assert [e.type for e in _events(stripe_client, marker)] == ["test_helpers.test_clock.advancing",
                                                               "test_helpers.test_clock.ready"]

    marker = _marker(stripe_client)
    _advance(stripe_client, clock.id, T0 + 2 * HOUR)
    _open_with_its_intent(stripe_client, sub.latest_invoice, T0 + HOUR)
    # finalised and left for the customer to pay: no charge, no failed payment, the subscription untouched
    assert [e.type for e in _events(stripe_client, marker)] == [
        "test_helpers.test_clock.advancing", "payment_intent.created", "invoice.finalized",
        "test_helpers.test_clock.ready"]
    _never_charged(stripe_client, customer, sub.id)


def test_post_finalize_finalises_it_at_once_on_the_clocks_time(stripe_client, clocked):
    clock, customer, price = clocked
    sub = _subscribe(stripe_client, customer, price)
    _advance(stripe_client, clock.id, T0 + 10 * 60)
    marker = _marker(stripe_client)
    finalized = stripe_client.v1.invoices.finalize_invoice(sub.latest_invoice)
    assert finalized.status == "open"
    _open_with_its_intent(stripe_client, sub.latest_invoice, T0 + 10 * 60)
    assert [e.type for e in _events(stripe_client, marker)] == ["payment_intent.created", "invoice.finalized"]
    with pytest.raises(stripe.InvalidRequestError) as caught:
        stripe_client.v1.invoices.finalize_invoice(sub.latest_invoice)
    assert caught.value.param == "invoice"
    # the hour passing later finalises nothing again
    marker = _marker(stripe_client)
    _advance(stripe_client, clock.id, T0 + 2 * HOUR)
    assert [e.type for e in _events(stripe_client, marker)] == ["test_helpers.test_clock.advancing",
                                                               "test_helpers.test_clock.ready"]
    _open_with_its_intent(stripe_client, sub.latest_invoice, T0 + 10 * 60)
    _never_charged(stripe_client, customer, sub.id)


def test_post_send_finalises_the_draft_then_sends_it(stripe_client, clocked):
    _, customer, price = clocked
    sub = _subscribe(stripe_client, customer, price)
    marker = _marker(stripe_client)
    sent = stripe_client.v1.invoices.send_invoice(sub.latest_invoice)
    assert (sent.status, sent.automatically_finalizes_at) == ("open", None)
    _open_with_its_intent(stripe_client, sub.latest_invoice, T0)
    events = _events(stripe_client, marker)
    assert [e.type for e in events] == ["payment_intent.created", "invoice.finalized", "invoice.sent"]
    assert events[-1].data.object.status == "open"
    # sending it again only sends it
    marker = _marker(stripe_client)
    stripe_client.v1.invoices.send_invoice(sub.latest_invoice)
    assert [e.type for e in _events(stripe_client, marker)] == ["invoice.sent"]
    _never_charged(stripe_client, customer, sub.id)


def test_a_first_invoice_with_nothing_due_is_still_finalised_and_paid_at_once(stripe_client, clocked):
    _, customer, price = clocked
    sub = _subscribe(stripe_client, customer, price, trial_period_days=7)
    assert sub.status == "trialing"
    invoice = stripe_client.v1.invoices.retrieve(sub.latest_invoice)
    assert (invoice.status, invoice.amount_due, invoice.automatically_finalizes_at) == ("paid", 0, None)
    assert invoice.status_transitions.finalized_at == T0


def test_renewals_are_unchanged_a_draft_finalised_an_hour_later_and_never_charged(stripe_client, clocked):
    clock, customer, price = clocked
    sub = _subscribe(stripe_client, customer, price)
    first = sub.latest_invoice
    _advance(stripe_client, clock.id, T0 + 2 * HOUR)
    marker = _marker(stripe_client)
    _advance(stripe_client, clock.id, T0 + DAY + HOUR // 2)
    renewed = stripe_client.v1.subscriptions.retrieve(sub.id)
    assert renewed.latest_invoice != first and renewed.status == "active"
    renewal = stripe_client.v1.invoices.retrieve(renewed.latest_invoice)
    assert (renewal.status, renewal.billing_reason, renewal.created, renewal.automatically_finalizes_at) == (
        "draft", "subscription_cycle", T0 + DAY, T0 + DAY + HOUR)
    events = _events(stripe_client, marker)
    assert [e.type for e in events] == ["test_helpers.test_clock.advancing", "invoice.created",
                                        "customer.subscription.updated", "test_helpers.test_clock.ready"]
    assert events[1].data.object.automatically_finalizes_at == T0 + DAY + HOUR

    marker = _marker(stripe_client)
    _advance(stripe_client, clock.id, T0 + DAY + 2 * HOUR)
    renewal = stripe_client.v1.invoices.retrieve(renewal.id)
    assert (renewal.status, renewal.status_transitions.finalized_at, renewal.due_date) == (
        "open", T0 + DAY + HOUR, T0 + DAY + 30 * DAY)
    assert [e.type for e in _events(stripe_client, marker)] == [
        "test_helpers.test_clock.advancing", "payment_intent.created", "invoice.finalized",
        "test_helpers.test_clock.ready"]
    assert stripe_client.v1.invoices.retrieve(first).status == "open"
    _never_charged(stripe_client, customer, sub.id)


def test_paying_the_draft_through_the_api_happens_at_the_test_clocks_time(stripe_client, clocked):
    clock, customer, price = clocked
    _advance(stripe_client, clock.id, T0 + 10 * 60)
    sub = _subscribe(stripe_client, customer, price)
    paid = stripe_client.v1.invoices.pay(sub.latest_invoice, params={"payment_method": "pm_card_visa"})
    assert paid.status == "paid"
    # finalised and paid at the clock's time, not the emulator's own (wall) time
    assert paid.status_transitions.finalized_at == paid.status_transitions.paid_at == T0 + 10 * 60


def test_a_paid_invoice_can_be_sent_again_a_void_one_cannot(stripe_client, clocked):
    _, customer, price = clocked
    sub = _subscribe(stripe_client, customer, price)
    stripe_client.v1.invoices.pay(sub.latest_invoice, params={"paid_out_of_band": True})
    marker = _marker(stripe_client)
    assert stripe_client.v1.invoices.send_invoice(sub.latest_invoice).status == "paid"
    assert [e.type for e in _events(stripe_client, marker)] == ["invoice.sent"]
    other = _subscribe(stripe_client, customer, price)
    stripe_client.v1.invoices.finalize_invoice(other.latest_invoice)
    stripe_client.v1.invoices.void_invoice(other.latest_invoice)
    marker = _marker(stripe_client)
    with pytest.raises(stripe.InvalidRequestError) as err:
        stripe_client.v1.invoices.send_invoice(other.latest_invoice)
    assert "void" in err.value.user_message
    assert _events(stripe_client, marker) == []
