"""Seed for invoicing-migration: the customer who already exists in the studio's Stripe account.

lee.park@example.com bought online before the move, so Stripe already has a Customer for that email: the migration
must reuse it, not make a second one. Idempotent: the customer is looked up by email first.
Runs in the workspace with the episode's STRIPE_* variables.
"""

import os

import stripe

EXISTING = {"email": "lee.park@example.com", "name": "Lee Park", "metadata": {"origin": "online-shop"}}


def main() -> None:
    client = stripe.StripeClient(
        os.environ["STRIPE_SECRET_KEY"],
        base_addresses={"api": os.environ["STRIPE_API_BASE"]} if os.environ.get("STRIPE_API_BASE") else None,
        stripe_version=os.environ.get("STRIPE_API_VERSION") or None,
    )
    found = client.v1.customers.list(params={"email": EXISTING["email"], "limit": 1}).data
    customer = found[0] if found else client.v1.customers.create(params=EXISTING)
    print(f"existing customer {customer.id} ({EXISTING['email']})")


if __name__ == "__main__":
    main()
