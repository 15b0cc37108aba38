"""Invoices, invoice items and invoice payments through stripe-python: lifecycle, partial payments, versions, errors."""

from __future__ import annotations

import pytest
import stripe

OLD = "2024-06-20"  # before 2025-03-31: lines carry ``price``, invoices ``paid``/``payment_intent``


def _events(client: stripe.StripeClient, prefix: str = "") -> list[str]:
    listed = client.v1.events.list(params={"limit": 100}).data
    return [e.type for e in reversed(listed) if e.type.startswith(prefix)]


@pytest.fixture
def shop(stripe_client):
    """A customer with a default card, and a one-time price."""
    customer = stripe_client.v1.customers.create(params={
        "email": "ada@example.com", "payment_method": "pm_card_visa",
        "invoice_settings": {"default_payment_method": "pm_card_visa"}})
    product = stripe_client.v1.products.create(params={"name": "Widget"})
    price = stripe_client.v1.prices.create(params={"product": product.id, "unit_amount": 1500, "currency": "usd"})
    return customer, price


def _open_invoice(client: stripe.StripeClient, customer: str, amount: int) -> stripe.Invoice:
    invoice = client.v1.invoices.create(params={"customer": customer})
    client.v1.invoice_items.create(params={"customer": customer, "invoice": invoice.id, "amount": amount,
                                           "currency": "usd", "description": "Consulting"})
    return client.v1.invoices.finalize_invoice(invoice.id)


def test_draft_finalize_pay_with_amounts_transitions_and_events(stripe_client, shop):
    customer, price = shop
    item = stripe_client.v1.invoice_items.create(params={"customer": customer.id, "pricing": {"price": price.id},
                                                         "quantity": 2})
    assert (item.amount, item.invoice, item.pricing.price_details.price) == (3000, None, price.id)
    stripe_client.v1.invoice_items.create(params={"customer": customer.id, "amount": 500, "currency": "usd",
                                                  "description": "Setup fee"})
    draft = stripe_client.v1.invoices.create(params={"customer": customer.id, "pending_invoice_items_behavior": "include",
                                                     "description": "March"})
    assert (draft.status, draft.amount_due, draft.number, draft.hosted_invoice_url) == ("draft", 3500, None, None)
    assert [line.amount for line in draft.lines.data] == [3000, 500]
    assert draft.lines.data[0].pricing.price_details.price == price.id
    assert stripe_client.v1.invoice_items.retrieve(item.id).invoice == draft.id
    excluded = stripe_client.v1.invoices.create(params={"customer": customer.id})  # the default excludes pending items
    assert excluded.lines.data == [] and excluded.amount_due == 0

    updated = stripe_client.v1.invoice_items.update(item.id, params={"quantity": 3})
    assert updated.amount == 4500
    assert stripe_client.v1.invoices.retrieve(draft.id).amount_due == 5000

    opened = stripe_client.v1.invoices.finalize_invoice(draft.id)
    assert opened.status == "open" and opened.number and opened.status_transitions.finalized_at
    assert (opened.amount_due, opened.amount_paid, opened.amount_remaining) == (5000, 0, 5000)
    paid = stripe_client.v1.invoices.pay(draft.id)  # the customer's default payment method
    assert (paid.status, paid.amount_paid, paid.amount_remaining, paid.attempt_count) == ("paid", 5000, 0, 1)
    assert paid.status_transitions.paid_at is not None
    payments = stripe_client.v1.invoice_payments.list(params={"invoice": draft.id}).data
    assert [(p.amount_paid, p.status, p.is_default) for p in payments] == [(5000, "paid", True)]
    pi = stripe_client.v1.payment_intents.retrieve(payments[0].payment.payment_intent)
    assert (pi.status, pi.amount, pi.customer) == ("succeeded", 5000, customer.id)

    invoice_events = [t for t in _events(stripe_client) if t.startswith(("invoice", "invoiceitem"))]
    assert invoice_events == ["invoiceitem.created", "invoiceitem.created", "invoice.created", "invoice.created",
                              "invoiceitem.updated", "invoice.finalized", "invoice_payment.paid", "invoice.paid",
                              "invoice.payment_succeeded"]
    assert [i.id for i in stripe_client.v1.invoices.list(params={"customer": customer.id, "status": "paid"}).data] \
        == [draft.id]
    found = stripe_client.v1.invoices.search(params={"query": f"customer:'{customer.id}' AND status:'draft'"})
    assert [i.id for i in found.data] == [excluded.id]


def test_partial_payments_stay_open_until_paid_in_full(stripe_client, shop):
    customer, _ = shop
    invoice = _open_invoice(stripe_client, customer.id, 3000)
    first = stripe_client.v1.payment_intents.create(params={
        "amount": 1000, "currency": "usd", "customer": customer.id, "payment_method": "pm_card_visa", "confirm": True})
    after_first = stripe_client.v1.invoices.attach_payment(invoice.id, params={"payment_intent": first.id})
    assert (after_first.status, after_first.amount_paid, after_first.amount_remaining) == ("open", 1000, 2000)

    too_big = stripe_client.v1.payment_intents.create(params={"amount": 2500, "currency": "usd"})
    with pytest.raises(stripe.InvalidRequestError) as caught:
        stripe_client.v1.invoices.attach_payment(invoice.id, params={"payment_intent": too_big.id})
    assert caught.value.http_status == 400 and caught.value.param == "payment_intent"
    assert "greater than the invoice's amount_remaining (2000)" in caught.value.user_message
    assert stripe_client.v1.invoices.retrieve(invoice.id).amount_remaining == 2000  # nothing changed

    second = stripe_client.v1.payment_intents.create(params={"amount": 2000, "currency": "usd"})
    pending = stripe_client.v1.invoices.attach_payment(invoice.id, params={"payment_intent": second.id})
    assert (pending.status, pending.amount_paid) == ("open", 1000)  # credited once it succeeds
    stripe_client.v1.payment_intents.confirm(second.id, params={"payment_method": "pm_card_visa"})
    done = stripe_client.v1.invoices.retrieve(invoice.id, params={"expand": ["payments"]})
    assert (done.status, done.amount_paid, done.amount_remaining) == ("paid", 3000, 0)
    default, *parts = done.payments.data  # the one finalising made, no longer needed once the parts paid
    assert (default.is_default, default.status, default.amount_paid) == (True, "canceled", None)
    assert sorted((p.amount_paid, p.payment.payment_intent) for p in parts) == sorted(
        [(1000, first.id), (2000, second.id)])
    assert _events(stripe_client, "invoice_payment.") == ["invoice_payment.paid", "invoice_payment.paid"]
    with pytest.raises(stripe.InvalidRequestError, match="already attached"):
        other = _open_invoice(stripe_client, customer.id, 500)
        stripe_client.v1.invoices.attach_payment(other.id, params={"payment_intent": first.id})


def test_out_of_band_void_uncollectible_and_delete(stripe_client, shop):
    customer, _ = shop
    oob = _open_invoice(stripe_client, customer.id, 1200)
    paid = stripe_client.v1.invoices.pay(oob.id, params={"paid_out_of_band": True})
    assert (paid.status, paid.amount_remaining) == ("paid", 0)
    # no money moved here: the default payment finalising made is canceled, and its PaymentIntent with it
    [default] = stripe_client.v1.invoice_payments.list(params={"invoice": oob.id}).data
    assert (default.is_default, default.status, default.amount_paid) == (True, "canceled", None)
    assert stripe_client.v1.invoices.retrieve(oob.id, options={"stripe_version": OLD}).paid_out_of_band is True
    assert [(pi.id, pi.status) for pi in stripe_client.v1.payment_intents.list().data] == [
        (default.payment.payment_intent, "canceled")]

    voided = stripe_client.v1.invoices.void_invoice(_open_invoice(stripe_client, customer.id, 800).id)
    assert voided.status == "void" and voided.status_transitions.voided_at is not None
    with pytest.raises(stripe.InvalidRequestError) as caught:
        stripe_client.v1.invoices.pay(voided.id)
    assert caught.value.user_message == "Voided invoices cannot be paid."
    assert stripe_client.v1.invoices.retrieve(voided.id).status == "void"

    bad_debt = stripe_client.v1.invoices.mark_uncollectible(_open_invoice(stripe_client, customer.id, 900).id)
    assert bad_debt.status == "uncollectible" and bad_debt.status_transitions.marked_uncollectible_at
    assert stripe_client.v1.invoices.pay(bad_debt.id, params={"payment_method": "pm_card_visa"}).status == "paid"

    draft = stripe_client.v1.invoices.create(params={"customer": customer.id})
    deleted = stripe_client.v1.invoices.delete(draft.id)
    assert deleted.deleted is True
    with pytest.raises(stripe.InvalidRequestError) as missing:
        stripe_client.v1.invoices.retrieve(draft.id)
    assert missing.value.http_status == 404
    with pytest.raises(stripe.InvalidRequestError, match="only delete draft"):
        stripe_client.v1.invoices.delete(voided.id)
    kinds = [t for t in _events(stripe_client, "invoice.") if t in (
        "invoice.paid", "invoice.payment_succeeded", "invoice.voided", "invoice.marked_uncollectible",
        "invoice.deleted")]
    assert kinds == ["invoice.paid", "invoice.voided", "invoice.marked_uncollectible", "invoice.paid",
                     "invoice.payment_succeeded", "invoice.deleted"]  # out of band: no payment_succeeded


def test_bad_input_is_refused_like_stripe_without_changes(stripe_client, shop):
    customer, price = shop
    invoice = _open_invoice(stripe_client, customer.id, 1000)
    with pytest.raises(stripe.InvalidRequestError) as refinal:
        stripe_client.v1.invoices.finalize_invoice(invoice.id)
    assert refinal.value.user_message.startswith("This invoice is already finalized")
    with pytest.raises(stripe.InvalidRequestError) as late_item:
        stripe_client.v1.invoice_items.create(params={"customer": customer.id, "invoice": invoice.id, "amount": 5,
                                                      "currency": "usd"})
    assert late_item.value.code == "invoice_not_editable"
    assert stripe_client.v1.invoice_items.list(params={"invoice": invoice.id}).data[0].amount == 1000
    with pytest.raises(stripe.InvalidRequestError) as enum:
        stripe_client.v1.invoices.create(params={"customer": customer.id, "collection_method": "by_carrier_pigeon"})
    assert enum.value.param == "collection_method"
    with pytest.raises(stripe.InvalidRequestError) as old_param:  # 2025-03-31 replaced price with pricing[price]
        stripe_client.v1.invoice_items.create(params={"customer": customer.id, "price": price.id})
    assert (old_param.value.code, old_param.value.param) == ("parameter_unknown", "price")
    with pytest.raises(stripe.InvalidRequestError) as no_due:
        stripe_client.v1.invoices.create(params={"customer": customer.id, "collection_method": "send_invoice"})
    assert no_due.value.param == "days_until_due"

    with pytest.raises(stripe.CardError) as declined:
        stripe_client.v1.invoices.pay(invoice.id, params={"payment_method": "pm_card_chargeDeclined"})
    assert declined.value.code == "card_declined"
    after = stripe_client.v1.invoices.retrieve(invoice.id)
    assert (after.status, after.amount_paid, after.attempt_count) == ("open", 0, 1)  # the attempt is kept
    assert "invoice.payment_failed" in _events(stripe_client)
    assert len(stripe_client.v1.invoices.list(params={"customer": customer.id}).data) == 1


def test_versions_lines_and_items_name_their_price_differently(stripe_client, shop):
    customer, price = shop
    old = {"stripe_version": OLD}
    item = stripe_client.v1.invoice_items.create(params={"customer": customer.id, "price": price.id}, options=old)
    assert item.price.id == price.id and item.unit_amount == 1500 and "pricing" not in item
    # before 2022-08-01 a new invoice took the pending items unless told otherwise
    invoice = stripe_client.v1.invoices.create(params={"customer": customer.id},
                                               options={"stripe_version": "2020-08-27"})
    line = stripe_client.v1.invoices.retrieve(invoice.id, options=old).lines.data[0]
    assert (line.type, line.price.id, line.invoice_item) == ("invoiceitem", price.id, item.id)
    assert "pricing" not in line and "parent" not in line
    new_line = stripe_client.v1.invoices.retrieve(invoice.id).lines.data[0]
    assert new_line.pricing.price_details.price == price.id and "price" not in new_line
    assert new_line.parent.invoice_item_details.invoice_item == item.id
    assert stripe_client.v1.invoice_items.retrieve(item.id).pricing.price_details.price == price.id
    paid = stripe_client.v1.invoices.pay(invoice.id, options=old)
    assert paid.paid is True and paid.payment_intent.startswith("pi_")
    assert "payment_intent" not in stripe_client.v1.invoices.retrieve(invoice.id)


# Field names of Stripe's published example objects (its OpenAPI fixtures), for the shapes checked below.
REFERENCE_FIELDS = {
    "invoiceitem": "amount currency customer customer_account date description discountable discounts id invoice "
                   "livemode metadata net_amount object parent period pricing proration quantity quantity_decimal "
                   "tax_rates test_clock",
    "invoice_payment": "amount_paid amount_requested created currency id invoice is_default livemode object payment "
                       "status status_transitions",
    "line_item": "amount currency description discount_amounts discountable discounts id invoice livemode metadata "
                 "object parent period pretax_credit_amounts pricing quantity quantity_decimal subscription subtotal "
                 "taxes",
}


def test_shapes_have_the_reference_fields(stripe_client, shop):
    customer, price = shop
    item = stripe_client.v1.invoice_items.create(params={"customer": customer.id, "pricing": {"price": price.id}})
    invoice = stripe_client.v1.invoices.create(params={"customer": customer.id,
                                                       "pending_invoice_items_behavior": "include"})
    stripe_client.v1.invoices.pay(invoice.id)
    payment = stripe_client.v1.invoice_payments.list(params={"invoice": invoice.id}).data[0]
    line = stripe_client.v1.invoices.line_items.list(invoice.id).data[0]
    for kind, obj in (("invoiceitem", stripe_client.v1.invoice_items.retrieve(item.id)),
                      ("invoice_payment", payment), ("line_item", line)):
        assert set(obj.to_dict()) == set(REFERENCE_FIELDS[kind].split()), kind


def test_subscription_lines_have_the_fields_of_invoice_item_lines_at_each_version(stripe_client, shop):
    customer, price = shop
    monthly = stripe_client.v1.prices.create(params={"currency": "usd", "unit_amount": 900,
                                                     "recurring": {"interval": "month"},
                                                     "product_data": {"name": "Plan"}})
    sub = stripe_client.v1.subscriptions.create(params={"customer": customer.id,
                                                        "items": [{"price": monthly.id, "quantity": 2}]})
    stripe_client.v1.invoice_items.create(params={"customer": customer.id, "pricing": {"price": price.id}})
    manual = stripe_client.v1.invoices.create(params={"customer": customer.id,
                                                      "pending_invoice_items_behavior": "include"})
    line = stripe_client.v1.invoices.line_items.list(sub.latest_invoice).data[0]
    assert set(line.to_dict()) == set(REFERENCE_FIELDS["line_item"].split())
    assert (line.subscription, line.quantity, str(line.quantity_decimal)) == (sub.id, 2, "2")
    assert line.parent.subscription_item_details.subscription == sub.id
    for version in (OLD, "2025-03-31.basil"):
        options = {"stripe_version": version}
        billed = stripe_client.v1.invoices.retrieve(sub.latest_invoice, options=options).lines.data[0].to_dict()
        itemized = stripe_client.v1.invoices.retrieve(manual.id, options=options).lines.data[0].to_dict()
        assert set(billed) == set(itemized), version
        assert billed["subscription"] == sub.id


def _awaiting_payment(client: stripe.StripeClient, customer: str) -> tuple[stripe.Invoice, stripe.PaymentIntent]:
    """A subscription's open first invoice and the unconfirmed PaymentIntent it is to be paid through."""
    price = client.v1.prices.create(params={"currency": "usd", "unit_amount": 2500, "recurring": {"interval": "month"},
                                            "product_data": {"name": "Plan"}})
    sub = client.v1.subscriptions.create(params={"customer": customer, "items": [{"price": price.id}],
                                                 "payment_behavior": "default_incomplete"})
    invoice = client.v1.invoices.retrieve(sub.latest_invoice, options={"stripe_version": OLD})
    pi = client.v1.payment_intents.retrieve(invoice.payment_intent)
    assert (invoice.status, pi.status) == ("open", "requires_payment_method")
    return invoice, pi


def test_voiding_an_invoice_cancels_its_payment_intent_which_can_no_longer_be_confirmed(stripe_client, shop):
    customer, _ = shop
    invoice, pi = _awaiting_payment(stripe_client, customer.id)
    assert stripe_client.v1.invoices.void_invoice(invoice.id).status == "void"
    canceled = stripe_client.v1.payment_intents.retrieve(pi.id)
    assert (canceled.status, canceled.cancellation_reason) == ("canceled", "void_invoice")
    assert canceled.canceled_at is not None
    events = stripe_client.v1.events.list(params={"type": "payment_intent.canceled"}).data
    assert [(e.data.object.id, e.data.object.cancellation_reason) for e in events] == [(pi.id, "void_invoice")]
    payments = stripe_client.v1.invoice_payments.list(params={"invoice": invoice.id}).data
    assert [(p.payment.payment_intent, p.status) for p in payments] == [(pi.id, "canceled")]
    with pytest.raises(stripe.InvalidRequestError) as bare:
        stripe_client.v1.payment_intents.confirm(pi.id)
    assert bare.value.code == "payment_intent_unexpected_state" and "status of canceled" in bare.value.user_message
    with pytest.raises(stripe.InvalidRequestError) as with_card:
        stripe_client.v1.payment_intents.confirm(pi.id, params={"payment_method": "pm_card_visa"})
    assert with_card.value.code == "payment_intent_unexpected_state"
    assert with_card.value.user_message.startswith("This PaymentIntent's payment_method could not be updated because "
                                                   "it has a status of canceled.")
    assert stripe_client.v1.payment_intents.retrieve(pi.id).status == "canceled"
    assert stripe_client.v1.charges.list().data == []  # no money moved
    assert stripe_client.v1.invoices.retrieve(invoice.id).status == "void"


def test_an_uncollectible_invoice_keeps_its_payment_intent_which_can_still_pay_it(stripe_client, shop):
    customer, _ = shop
    invoice, pi = _awaiting_payment(stripe_client, customer.id)
    assert stripe_client.v1.invoices.mark_uncollectible(invoice.id).status == "uncollectible"
    assert stripe_client.v1.payment_intents.retrieve(pi.id).status == "requires_payment_method"
    paid = stripe_client.v1.payment_intents.confirm(pi.id, params={"payment_method": "pm_card_visa"})
    assert paid.status == "succeeded"
    assert stripe_client.v1.invoices.retrieve(invoice.id).status == "paid"
