"""Expansions the published graders use, where the answer depends on the API version as on Stripe.

From 2025-03-31 (basil) an invoice has no ``payment_intent`` or ``subscription`` (its payments and its
``parent.subscription_details`` replace them); before, it has no ``parent``. Expanding a field the version does
not have is Stripe's 400 naming the path, never a silent success.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
import stripe
from test_published_coverage import CARD

OLD, BASIL, CLOVER = "2024-06-20", "2025-03-31.basil", "2025-09-30.clover"


def _get(emulator: Any, path: str, version: str, *expand: str) -> httpx.Response:
    return httpx.get(f"{emulator.url}{path}", params=[("expand[]", e) for e in expand], timeout=10,
                     headers={"Authorization": "Bearer sk_test_x", "Stripe-Version": version})


@pytest.fixture
def paid_subscription(stripe_client: stripe.StripeClient, emulator: Any) -> Any:
    """A subscription-mode Checkout Session for an existing customer, paid."""
    customer = stripe_client.v1.customers.create(params={"email": "sub@example.com"})
    price = stripe_client.v1.prices.create(params={"currency": "usd", "unit_amount": 1900, "recurring": {"interval": "month"},
                                                   "product_data": {"name": "Club"}})
    session = stripe_client.v1.checkout.sessions.create(params={
        "mode": "subscription", "customer": customer.id, "success_url": "https://a.test",
        "line_items": [{"price": price.id, "quantity": 1}]})
    reply = httpx.post(f"{emulator.url}/_checkout/{session.id}/submit", json=CARD, timeout=10).json()
    assert reply.get("status") == "complete", reply
    return stripe_client.v1.checkout.sessions.retrieve(session.id)


def test_invoice_payment_intent_expands_before_basil_and_is_a_400_after(emulator, paid_subscription):
    invoice = paid_subscription.invoice
    old = _get(emulator, f"/v1/invoices/{invoice}", OLD, "payment_intent", "subscription")
    assert old.status_code == 200
    assert old.json()["payment_intent"]["object"] == "payment_intent"
    assert old.json()["payment_intent"]["status"] == "succeeded"
    assert old.json()["subscription"]["id"] == paid_subscription.subscription
    for version in (BASIL, CLOVER):
        for path in ("payment_intent", "subscription"):
            new = _get(emulator, f"/v1/invoices/{invoice}", version, path)
            assert new.status_code == 400, (version, path, new.text)
            assert new.json()["error"]["param"] == "expand"
            assert new.json()["error"]["message"] == f"This property cannot be expanded ({path})."
    nested = _get(emulator, f"/v1/subscriptions/{paid_subscription.subscription}", CLOVER, "latest_invoice.payment_intent")
    assert nested.status_code == 400 and "(latest_invoice.payment_intent)" in nested.json()["error"]["message"]
    parent = _get(emulator, f"/v1/invoices/{invoice}", CLOVER, "parent.subscription_details.subscription", "payments")
    assert parent.status_code == 200
    assert parent.json()["parent"]["subscription_details"]["subscription"]["object"] == "subscription"
    assert parent.json()["payments"]["data"][0]["payment"]["type"] == "payment_intent"
    assert _get(emulator, f"/v1/invoices/{invoice}", OLD, "parent.subscription_details.subscription").status_code == 400


def test_customer_latest_invoice_and_payment_intent_where_they_apply(emulator, paid_subscription):
    session = _get(emulator, f"/v1/checkout/sessions/{paid_subscription.id}", CLOVER,
                   "customer", "payment_intent", "subscription.latest_invoice", "invoice.customer")
    assert session.status_code == 200, session.text
    body = session.json()
    assert body["customer"]["object"] == "customer" and body["customer"]["email"] == "sub@example.com"
    assert body["payment_intent"] is None  # a subscription session pays through its invoice
    assert body["subscription"]["latest_invoice"]["id"] == body["invoice"]["id"] == paid_subscription.invoice
    assert body["invoice"]["customer"]["id"] == body["customer"]["id"]
    listed = _get(emulator, "/v1/subscriptions", CLOVER, "data.customer", "data.latest_invoice")
    assert [(s["customer"]["object"], s["latest_invoice"]["object"]) for s in listed.json()["data"]] == [
        ("customer", "invoice")]
    by_invoice = httpx.get(f"{emulator.url}/v1/invoice_payments", timeout=10,
                           params=[("invoice", paid_subscription.invoice), ("expand[]", "data.payment.payment_intent")],
                           headers={"Authorization": "Bearer sk_test_x", "Stripe-Version": CLOVER})
    intent = by_invoice.json()["data"][0]["payment"]["payment_intent"]
    assert intent["object"] == "payment_intent" and intent["customer"] == body["customer"]["id"]
    assert intent["status"] == "succeeded" and intent["amount"] == 1900


def test_a_trial_counts_from_when_the_subscription_starts(stripe_client, emulator):
    """trial_period_days run from the payment that starts the subscription, not from the session's creation."""
    monthly = stripe_client.v1.prices.create(params={"currency": "usd", "unit_amount": 1800,
                                                     "recurring": {"interval": "month"}, "product_data": {"name": "Gym"}})
    session = stripe_client.v1.checkout.sessions.create(params={
        "mode": "subscription", "success_url": "https://a.test", "line_items": [{"price": monthly.id, "quantity": 1}],
        "subscription_data": {"trial_period_days": 7}})
    clock = httpx.post(f"{emulator.url}/_emulator/clock", json={"advance": 3600}, headers=emulator.control_headers,
                       timeout=10).json()
    reply = httpx.post(f"{emulator.url}/_checkout/{session.id}/submit", json=CARD, timeout=10).json()
    assert reply.get("status") == "complete", reply
    sub = stripe_client.v1.subscriptions.retrieve(stripe_client.v1.checkout.sessions.retrieve(session.id).subscription)
    assert sub.trial_start >= clock["now"] and sub.trial_end - sub.trial_start == 7 * 86400


def test_customer_sources_are_included_before_2020_08_27_and_expandable_after(stripe_client, emulator):
    customer = stripe_client.v1.customers.create(params={"email": "cards@example.com", "source": "tok_visa"})
    second = stripe_client.v1.customers.payment_sources.create(customer.id, params={"source": "tok_mastercard"})
    old = stripe_client.v1.customers.retrieve(customer.id, options={"stripe_version": "2020-03-02"})
    sources = old.sources
    assert (sources.object, sources.url, sources.has_more, sources.total_count) == (
        "list", f"/v1/customers/{customer.id}/sources", False, 2)
    assert [(c.id, c.object, c.last4) for c in sources.data] == [
        (second.id, "card", "4444"), (customer.default_source, "card", "4242")]  # newest first
    assert set(sources.data[0].to_dict()) == set(second.to_dict())  # the card as its own endpoint renders it

    assert "sources" not in stripe_client.v1.customers.retrieve(customer.id)  # the SDK's pinned version
    assert "sources" not in stripe_client.v1.customers.retrieve(customer.id, options={"stripe_version": CLOVER})
    expanded = stripe_client.v1.customers.retrieve(customer.id, params={"expand": ["sources"]},
                                                   options={"stripe_version": CLOVER})
    assert [c.id for c in expanded.sources.data] == [second.id, customer.default_source]
    deep = stripe_client.v1.customers.retrieve(customer.id, params={"expand": ["sources.data.customer"]})
    assert deep.sources.data[0].customer.id == customer.id
    listed = stripe_client.v1.customers.list(params={"expand": ["data.sources"]}).data
    assert [c.sources.total_count for c in listed] == [2]
    stripe_client.v1.customers.payment_sources.delete(customer.id, second.id)
    assert [c.id for c in stripe_client.v1.customers.retrieve(
        customer.id, options={"stripe_version": "2020-03-02"}).sources.data] == [customer.default_source]
    with pytest.raises(stripe.InvalidRequestError) as wrong:
        stripe_client.v1.customers.retrieve(customer.id, params={"expand": ["tax_rates"]})
    assert wrong.value.param == "expand"
