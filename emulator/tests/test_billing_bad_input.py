"""Issue 12's "Bad input" list, through stripe-python: Stripe's error type, code and message, and no state change.

Where Stripe's wording is public (paying a void invoice, updating a canceled subscription) the emulator's message
is Stripe's; the others follow the docs' rules (a test clock only moves forward; a meter event needs an active
meter with that ``event_name``; an attached payment may not exceed ``amount_remaining``). "No state change" is
checked on the whole store: every object of every type, events included, is as it was before the request.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
import stripe

from stripebench_emulator.model.store import clone

T0 = int(datetime(2026, 1, 10, 12, tzinfo=UTC).timestamp())
Setup = Callable[[stripe.StripeClient], Callable[[], Any]]


def _customer(client: stripe.StripeClient, **extra: Any) -> stripe.Customer:
    return client.v1.customers.create(params={"payment_method": "pm_card_visa",
                                              "invoice_settings": {"default_payment_method": "pm_card_visa"}, **extra})


def _open_invoice(client: stripe.StripeClient, customer: str, amount: int) -> stripe.Invoice:
    invoice = client.v1.invoices.create(params={"customer": customer})
    client.v1.invoice_items.create(params={"customer": customer, "invoice": invoice.id, "amount": amount,
                                           "currency": "usd", "description": "Consulting"})
    return client.v1.invoices.finalize_invoice(invoice.id)


def clock_backwards(client: stripe.StripeClient) -> Callable[[], Any]:
    clock = client.v1.test_helpers.test_clocks.create(params={"frozen_time": T0})
    _customer(client, test_clock=clock.id)
    return lambda: client.v1.test_helpers.test_clocks.advance(clock.id, params={"frozen_time": T0 - 3600})


def pay_void_invoice(client: stripe.StripeClient) -> Callable[[], Any]:
    customer = _customer(client)
    voided = client.v1.invoices.void_invoice(_open_invoice(client, customer.id, 800).id)
    return lambda: client.v1.invoices.pay(voided.id)


def attach_more_than_remains(client: stripe.StripeClient) -> Callable[[], Any]:
    customer = _customer(client)
    invoice = _open_invoice(client, customer.id, 3000)
    first = client.v1.payment_intents.create(params={"amount": 1000, "currency": "usd", "customer": customer.id,
                                                     "payment_method": "pm_card_visa", "confirm": True})
    client.v1.invoices.attach_payment(invoice.id, params={"payment_intent": first.id})
    too_big = client.v1.payment_intents.create(params={"amount": 2500, "currency": "usd", "customer": customer.id,
                                                       "payment_method": "pm_card_visa", "confirm": True})
    return lambda: client.v1.invoices.attach_payment(invoice.id, params={"payment_intent": too_big.id})


def update_canceled_subscription(client: stripe.StripeClient) -> Callable[[], Any]:
    customer = _customer(client)
    price = client.v1.prices.create(params={"currency": "usd", "unit_amount": 900, "product_data": {"name": "Pro"},
                                            "recurring": {"interval": "month"}})
    sub = client.v1.subscriptions.create(params={"customer": customer.id, "items": [{"price": price.id}]})
    client.v1.subscriptions.cancel(sub.id)
    item = sub["items"].data[0].id
    return lambda: client.v1.subscriptions.update(sub.id, params={"items": [{"id": item, "quantity": 3}]})


def meter_event_for_unknown_meter(client: stripe.StripeClient) -> Callable[[], Any]:
    customer = _customer(client)
    client.v1.billing.meters.create(params={  # a meter exists, just not for this event name
        "display_name": "API calls", "event_name": "api_call", "default_aggregation": {"formula": "sum"},
        "customer_mapping": {"event_payload_key": "stripe_customer_id", "type": "by_id"}})
    return lambda: client.v1.billing.meter_events.create(params={
        "event_name": "api_calls_typo", "payload": {"stripe_customer_id": customer.id, "value": "1"}})


CASES = [
    pytest.param(clock_backwards, 400, "invalid_request_error", None, "frozen_time",
                 f"The test clock's frozen_time can only be advanced forward. The new frozen_time ({T0 - 3600}) must "
                 f"be after the current frozen_time ({T0}).", id="test-clock-backwards"),
    pytest.param(pay_void_invoice, 400, "invalid_request_error", None, "invoice",
                 "Voided invoices cannot be paid.", id="pay-void-invoice"),
    pytest.param(attach_more_than_remains, 400, "invalid_request_error", None, "payment_intent",
                 "The PaymentIntent's amount (2500) is greater than the invoice's amount_remaining (2000).",
                 id="attach-more-than-remains"),
    pytest.param(update_canceled_subscription, 400, "invalid_request_error", None, None,
                 "A canceled subscription can only update its cancellation_details and metadata.",
                 id="update-canceled-subscription"),
    pytest.param(meter_event_for_unknown_meter, 400, "invalid_request_error", "resource_missing", "event_name",
                 "No active meter was found that matches the event_name `api_calls_typo`.", id="unknown-meter"),
]


@pytest.mark.parametrize("setup, status, error_type, code, param, message", CASES)
def test_bad_billing_input_gets_stripes_error_and_changes_nothing(stripe_client, emulator, setup: Setup, status: int,
                                                                  error_type: str, code: str | None,
                                                                  param: str | None, message: str) -> None:
    call = setup(stripe_client)
    store = emulator.emulator.store
    with store.lock:
        before = clone(store.objects)
    with pytest.raises(stripe.StripeError) as caught:
        call()
    error = caught.value
    assert isinstance(error, stripe.InvalidRequestError)
    body = error.json_body["error"]
    assert (error.http_status, body["type"], body.get("code"), body.get("param"), body["message"]) == (
        status, error_type, code, param, message)
    assert error.user_message == message and error.code == code
    with store.lock:
        after = clone(store.objects)
    assert after == before  # no object of any type, no event, changed or added
