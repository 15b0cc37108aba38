"""Subscriptions and invoices made by subscription-mode Checkout, through stripe-python: shapes by version, list
filters, update, cancel, errors, events."""

from __future__ import annotations

import httpx
import pytest
import stripe

CARD = {"email": "sub@example.com", "card_number": "4242424242424242", "expiry": "1234", "cvc": "123",
        "name": "Sam Sub"}


def _subscribe(client: stripe.StripeClient, emulator, interval: str = "month", count: int = 1,
               **params) -> stripe.checkout.Session:
    price = client.v1.prices.create(params={"currency": "usd", "unit_amount": 1000,
                                            "recurring": {"interval": interval, "interval_count": count},
                                            "product_data": {"name": f"Plan per {interval}"}})
    session = client.v1.checkout.sessions.create(params={
        "mode": "subscription", "success_url": "https://a.test", "line_items": [{"price": price.id, "quantity": 1}],
        **params})
    reply = httpx.post(f"{emulator.url}/_checkout/{session.id}/submit", json=CARD).json()
    assert reply["status"] == "complete", reply
    return client.v1.checkout.sessions.retrieve(session.id)


def test_period_fields_by_version_and_calendar_month(stripe_client, emulator):
    done = _subscribe(stripe_client, emulator, "year")
    new = stripe_client.v1.subscriptions.retrieve(done.subscription)
    item = new["items"].data[0]
    assert "current_period_end" not in new and item.current_period_end > item.current_period_start
    days = (item.current_period_end - item.current_period_start) / 86400
    assert 365 <= days <= 366
    old = stripe_client.v1.subscriptions.retrieve(done.subscription, options={"stripe_version": "2024-06-20"})
    assert old.current_period_start == item.current_period_start
    assert "current_period_end" not in old["items"].data[0]
    invoice_old = stripe_client.v1.invoices.retrieve(done.invoice, options={"stripe_version": "2024-06-20"})
    assert invoice_old.subscription == new.id and invoice_old.payment_intent.startswith("pi_")
    invoice_new = stripe_client.v1.invoices.retrieve(done.invoice)
    assert "subscription" not in invoice_new and invoice_new.parent.subscription_details.subscription == new.id


def test_list_filters_and_invoice_lines(stripe_client, emulator):
    first = _subscribe(stripe_client, emulator)
    second = _subscribe(stripe_client, emulator, "week")
    subs = stripe_client.v1.subscriptions.list(params={"customer": first.customer}).data
    assert [s.id for s in subs] == [first.subscription]
    price = stripe_client.v1.subscriptions.retrieve(second.subscription)["items"].data[0].price.id
    assert [s.id for s in stripe_client.v1.subscriptions.list(params={"price": price}).data] == [second.subscription]
    assert len(stripe_client.v1.subscriptions.list(params={"status": "active"}).data) == 2
    assert [i.id for i in stripe_client.v1.invoices.list(params={"customer": second.customer}).data] == [second.invoice]
    assert len(stripe_client.v1.invoices.list(params={"status": "paid"}).data) == 2
    lines = stripe_client.v1.invoices.line_items.list(first.invoice)
    assert lines.data[0].object == "line_item" and lines.data[0].amount == 1000
    expanded = stripe_client.v1.subscriptions.retrieve(first.subscription, params={"expand": ["latest_invoice"]})
    assert expanded.latest_invoice.id == first.invoice and expanded.latest_invoice.status == "paid"


def test_update_cancel_and_errors(stripe_client, emulator):
    done = _subscribe(stripe_client, emulator)
    sub_id = done.subscription
    updated = stripe_client.v1.subscriptions.update(sub_id, params={"cancel_at_period_end": True,
                                                                   "metadata": {"reason": "budget"}})
    assert updated.cancel_at_period_end is True and updated.metadata.to_dict() == {"reason": "budget"}
    undone = stripe_client.v1.subscriptions.update(sub_id, params={"cancel_at_period_end": False})
    assert undone.cancel_at is None and undone.status == "active"
    with pytest.raises(stripe.InvalidRequestError) as info:
        stripe_client.v1.subscriptions.update(sub_id, params={"quantity_please": "2"})
    assert info.value.code == "parameter_unknown"
    canceled = stripe_client.v1.subscriptions.cancel(sub_id)
    assert canceled.status == "canceled" and canceled.canceled_at and canceled.ended_at
    with pytest.raises(stripe.InvalidRequestError):
        stripe_client.v1.subscriptions.cancel(sub_id)
    with pytest.raises(stripe.InvalidRequestError) as info:
        stripe_client.v1.subscriptions.retrieve("sub_missing")
    assert info.value.http_status == 404 and info.value.code == "resource_missing"
    with pytest.raises(stripe.InvalidRequestError) as info:
        stripe_client.v1.invoices.retrieve("in_missing")
    assert info.value.http_status == 404
    types = [e.type for e in stripe_client.v1.events.list(params={"type": "customer.subscription.*"}).data]
    assert types[0] == "customer.subscription.deleted" and "customer.subscription.updated" in types


def test_subscription_discount_bills_the_first_invoice_less(stripe_client, emulator):
    coupon = stripe_client.v1.coupons.create(params={"amount_off": 300, "currency": "usd"})
    done = _subscribe(stripe_client, emulator, discounts=[{"coupon": coupon.id}])
    invoice = stripe_client.v1.invoices.retrieve(done.invoice)
    assert (invoice.subtotal, invoice.total, invoice.amount_paid) == (1000, 700, 700)
    assert stripe_client.v1.coupons.retrieve(coupon.id).times_redeemed == 1


def test_an_items_embedded_price_expands_its_product(stripe_client, emulator):
    """As the Next.js SaaS starter's return route asks: items.data.price.product (the price is embedded whole)."""
    done = _subscribe(stripe_client, emulator)
    sub = stripe_client.v1.subscriptions.retrieve(done.subscription, params={"expand": ["items.data.price.product"]})
    product = sub["items"].data[0].price.product
    assert product.object == "product" and product.name == "Plan per month"
    plan = stripe_client.v1.subscriptions.retrieve(done.subscription, params={"expand": ["items.data.plan.product"]})
    assert plan["items"].data[0].plan.product.object == "product"
    with pytest.raises(stripe.InvalidRequestError, match=r"cannot be expanded \(items.data.price.currency\)"):
        stripe_client.v1.subscriptions.retrieve(done.subscription, params={"expand": ["items.data.price.currency"]})
    with pytest.raises(stripe.InvalidRequestError, match=r"cannot be expanded \(items\)"):
        stripe_client.v1.subscriptions.retrieve(done.subscription, params={"expand": ["items"]})


def test_pending_setup_intent_and_the_latest_invoices_confirmation_secret_expand(stripe_client, emulator):
    """What subscription-gym's grader asks of every subscription it checks (its retrieve_subscription helper)."""
    done = _subscribe(stripe_client, emulator)
    sub = stripe_client.v1.subscriptions.retrieve(done.subscription, params={
        "expand": ["latest_invoice.confirmation_secret", "pending_setup_intent"]})
    assert sub.pending_setup_intent is None  # paid at once: nothing to set up
    assert sub.latest_invoice.object == "invoice" and sub.latest_invoice.id == done.invoice


def test_a_trial_without_a_payment_method_gets_a_pending_setup_intent_to_collect_one(stripe_client):
    price = stripe_client.v1.prices.create(params={"currency": "usd", "unit_amount": 6900, "product_data": {"name": "Club"},
                                                   "recurring": {"interval": "month"}})
    bare = stripe_client.v1.customers.create(params={"email": "trial@example.com"})
    sub = stripe_client.v1.subscriptions.create(params={"customer": bare.id, "items": [{"price": price.id}],
                                                        "trial_period_days": 14, "expand": ["pending_setup_intent"]})
    si = sub.pending_setup_intent
    assert sub.status == "trialing" and si.object == "setup_intent" and si.customer == bare.id
    assert si.status == "requires_payment_method" and si.usage == "off_session" and si.client_secret.startswith(si.id)
    carded = stripe_client.v1.customers.create(params={"payment_method": "pm_card_visa",
                                                        "invoice_settings": {"default_payment_method": "pm_card_visa"}})
    with_card = stripe_client.v1.subscriptions.create(params={"customer": carded.id, "items": [{"price": price.id}],
                                                              "trial_period_days": 14})
    assert with_card.status == "trialing" and with_card.pending_setup_intent is None  # the card is there already
