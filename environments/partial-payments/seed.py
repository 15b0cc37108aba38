"""Seed for partial-payments: Ridgeline Coworking's member, her yearly desk subscription and its open invoice.

Run with the workspace as the current directory; it writes the member (with her Stripe customer, subscription
and invoice ids) into ``desk.db``. Idempotent: the product has a fixed id, the price a lookup key and the
customer is found by email before anything is created. The grader imports the constants below, so the
expected payments have one source of truth.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path

CURRENCY = "usd"
PRODUCT_ID = "ridgeline_dedicated_desk"
PRODUCT_NAME = "Dedicated desk (yearly)"
LOOKUP_KEY = "ridgeline_dedicated_desk_yearly_usd"
YEARLY_AMOUNT = 124999  # cents: $1,249.99, odd on purpose
MEMBER = {"email": "maya.okafor@example.com", "name": "Maya Okafor"}
DAYS_UNTIL_DUE = 30


def halves(total: int = YEARLY_AMOUNT) -> tuple[int, int]:
    """The two payments the task asks for: half the total rounded down to the cent, then what remains."""
    return total // 2, total - total // 2


def _client():
    import stripe

    key = os.environ.get("STRIPE_SECRET_KEY")
    if not key:
        sys.exit("seed: STRIPE_SECRET_KEY is not set")
    base = os.environ.get("STRIPE_API_BASE")
    kwargs = {"base_addresses": {"api": base}} if base else {}
    if os.environ.get("STRIPE_API_VERSION"):
        kwargs["stripe_version"] = os.environ["STRIPE_API_VERSION"]
    return stripe.StripeClient(key, **kwargs)


def member_customer(client):
    """The member's Stripe Customer (None before the seed ran)."""
    found = client.v1.customers.list({"email": MEMBER["email"], "limit": 1}).data
    return found[0] if found else None


def member_subscription(client, customer_id: str):
    """The member's yearly desk subscription (None before the seed ran)."""
    found = client.v1.subscriptions.list({"customer": customer_id, "status": "all", "limit": 10}).data
    desks = [s for s in found if any(i.price.lookup_key == LOOKUP_KEY for i in s["items"].data)]
    return desks[-1] if desks else None  # the oldest one


def open_invoice(client, invoice_id: str) -> None:
    """Finalise the subscription's first invoice if it is still a draft: Stripe finalises a send_invoice
    subscription's first invoice only an hour after making it, and the member pays an open one."""
    import stripe

    if client.v1.invoices.retrieve(invoice_id).status != "draft":
        return
    try:
        client.v1.invoices.finalize_invoice(invoice_id)
    except stripe.InvalidRequestError:
        if client.v1.invoices.retrieve(invoice_id).status == "draft":
            raise
        # finalised by Stripe meanwhile: it is open all the same


def main() -> None:
    import stripe

    client = _client()
    try:
        client.v1.products.retrieve(PRODUCT_ID)
    except stripe.InvalidRequestError as exc:
        if exc.http_status != 404:
            raise
        client.v1.products.create({"id": PRODUCT_ID, "name": PRODUCT_NAME})
    prices = client.v1.prices.list({"lookup_keys": [LOOKUP_KEY], "active": True, "limit": 1}).data
    price = prices[0] if prices else client.v1.prices.create({
        "product": PRODUCT_ID, "unit_amount": YEARLY_AMOUNT, "currency": CURRENCY,
        "recurring": {"interval": "year"}, "lookup_key": LOOKUP_KEY})
    customer = member_customer(client) or client.v1.customers.create(dict(MEMBER))
    # Invoiced, not charged: the yearly invoice stays open until the member pays it (here: in two halves).
    sub = member_subscription(client, customer.id) or client.v1.subscriptions.create({
        "customer": customer.id, "items": [{"price": price.id}], "collection_method": "send_invoice",
        "days_until_due": DAYS_UNTIL_DUE})
    open_invoice(client, sub.latest_invoice)

    workspace = Path.cwd()
    with sqlite3.connect(workspace / "desk.db") as conn:
        conn.executescript((workspace / "schema.sql").read_text())
        conn.execute(
            "INSERT INTO members (email, name, stripe_customer, stripe_subscription, stripe_invoice)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (email) DO UPDATE SET name = excluded.name,"
            " stripe_customer = excluded.stripe_customer, stripe_subscription = excluded.stripe_subscription,"
            " stripe_invoice = excluded.stripe_invoice",
            (MEMBER["email"], MEMBER["name"], customer.id, sub.id, sub.latest_invoice))
    print(f"seed: {MEMBER['name']} ({customer.id}) owes {YEARLY_AMOUNT} on invoice {sub.latest_invoice}")


if __name__ == "__main__":
    main()
