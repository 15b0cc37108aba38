"""The hosted invoice page in Debian's Chromium: a partly paid invoice is paid in full from its page."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import stripe

from stripebench_tui.chromium import launch_options

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(120)]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(**launch_options())
        yield chromium
        chromium.close()


def test_hosted_invoice_page_shows_a_decline_then_takes_the_rest(browser: Any, stripe_client: stripe.StripeClient):
    customer = stripe_client.v1.customers.create(params={"email": "ada@example.com"})
    invoice = stripe_client.v1.invoices.create(params={"customer": customer.id, "collection_method": "send_invoice",
                                                       "days_until_due": 30})
    stripe_client.v1.invoice_items.create(params={"customer": customer.id, "invoice": invoice.id, "amount": 4200,
                                                  "currency": "usd", "description": "Workshop"})
    invoice = stripe_client.v1.invoices.finalize_invoice(invoice.id)
    deposit = stripe_client.v1.payment_intents.create(params={"amount": 1200, "currency": "usd",
                                                              "payment_method": "pm_card_visa", "confirm": True})
    stripe_client.v1.invoices.attach_payment(invoice.id, params={"payment_intent": deposit.id})

    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(15000)
    try:
        page.goto(invoice.hosted_invoice_url)
        assert page.locator("#invoice_status").inner_text() == "Due"
        assert page.get_by_role("button", name="Pay 30.00 USD").is_visible()  # what remains after the deposit
        page.get_by_label("Card number").fill("4000 0000 0000 0002")
        page.get_by_label("Expiration (MM / YY)").fill("12 / 34")
        page.get_by_label("CVC").fill("123")
        page.get_by_role("button", name="Pay 30.00 USD").click()
        page.get_by_role("alert").wait_for()
        assert page.get_by_role("alert").inner_text() == "Your card was declined."
        page.get_by_label("Card number").fill("4242 4242 4242 4242")
        page.get_by_label("Expiration (MM / YY)").fill("12 / 34")
        page.get_by_label("CVC").fill("123")
        page.get_by_role("button", name="Pay 30.00 USD").click()
        page.locator("#invoice_status", has_text="Paid").wait_for()
        assert page.get_by_role("button").count() == 0  # nothing left to pay
    finally:
        context.close()
    paid = stripe_client.v1.invoices.retrieve(invoice.id, params={"expand": ["payments"]})
    assert (paid.status, paid.amount_paid, paid.amount_remaining, paid.attempt_count) == ("paid", 4200, 0, 2)
    assert sorted(p.amount_paid for p in paid.payments.data) == [1200, 3000]
