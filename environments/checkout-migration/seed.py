"""Seed for checkout-migration: the shop's products and prices, the launch coupon and its promotion code.

Run with the workspace as the current directory; it writes the catalogue (with each
product's Stripe price id) into ``shop.db``. Idempotent: objects are found by their
fixed ids (products, coupon), lookup keys (prices) and code (promotion code) before
anything is created, so running it twice changes nothing. The grader imports the
constants below, so the catalogue has one source of truth.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path

CURRENCY = "usd"
# (slug, Stripe product id, name, description, unit amount in cents)
CATALOGUE = [
    ("sencha", "harbor_sencha", "Sencha green tea", "100 g of first-flush Japanese sencha.", 1200),
    ("earl-grey", "harbor_earl_grey", "Earl Grey", "100 g of black tea with bergamot.", 1050),
    ("teapot", "harbor_teapot", "Cast-iron teapot", "0.8 litres, with a stainless infuser.", 4800),
    ("whisk", "harbor_whisk", "Bamboo matcha whisk", "A 100-prong chasen for whisking matcha.", 900),
]
COUPON_ID = "harbor-launch-20"
PERCENT_OFF = 20
PROMOTION_CODE = "LAUNCH20"
# A second, unrelated code: using it instead of LAUNCH20 is not what the task asks.
OTHER_COUPON_ID = "harbor-friends-5"
OTHER_PROMOTION_CODE = "TEAFRIEND"


def lookup_key(slug: str) -> str:
    """The lookup key of a catalogue product's price."""
    return f"harbor_{slug.replace('-', '_')}_{CURRENCY}"


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


def _product(client, product_id: str, name: str, description: str):
    import stripe

    try:
        return client.v1.products.retrieve(product_id)
    except stripe.InvalidRequestError as exc:
        if exc.http_status != 404:
            raise
    return client.v1.products.create({"id": product_id, "name": name, "description": description})


def _price(client, slug: str, product_id: str, amount: int):
    key = lookup_key(slug)
    found = client.v1.prices.list({"lookup_keys": [key], "active": True, "limit": 1}).data
    if found and found[0].unit_amount == amount and found[0].product == product_id:
        return found[0]
    # transfer_lookup_key moves the key from a stale price (a changed amount) to the new one.
    return client.v1.prices.create({"product": product_id, "unit_amount": amount, "currency": CURRENCY,
                                    "lookup_key": key, "transfer_lookup_key": True})


def _coupon(client, coupon_id: str, **fields):
    import stripe

    try:
        return client.v1.coupons.retrieve(coupon_id)
    except stripe.InvalidRequestError as exc:
        if exc.http_status != 404:
            raise
    return client.v1.coupons.create({"id": coupon_id, **fields})


def _promotion_code(client, code: str, coupon_id: str):
    import stripe

    found = client.v1.promotion_codes.list({"code": code, "active": True, "limit": 1}).data
    if found:
        return found[0]
    try:  # API versions from 2025-09-30 take promotion[coupon]; older ones take coupon
        return client.v1.promotion_codes.create({"code": code, "promotion": {"type": "coupon", "coupon": coupon_id}})
    except stripe.InvalidRequestError as exc:
        if exc.param not in ("promotion", "coupon"):
            raise
        return client.v1.promotion_codes.create({"code": code, "coupon": coupon_id})


def main() -> None:
    client = _client()
    rows = []
    for position, (slug, product_id, name, description, amount) in enumerate(CATALOGUE):
        _product(client, product_id, name, description)
        price = _price(client, slug, product_id, amount)
        rows.append((slug, name, description, amount, CURRENCY, product_id, price.id, position))
    _coupon(client, COUPON_ID, percent_off=PERCENT_OFF, duration="once", name="Launch 20% off")
    _promotion_code(client, PROMOTION_CODE, COUPON_ID)
    _coupon(client, OTHER_COUPON_ID, amount_off=500, currency=CURRENCY, duration="once", name="Friends $5 off")
    _promotion_code(client, OTHER_PROMOTION_CODE, OTHER_COUPON_ID)

    workspace = Path.cwd()
    with sqlite3.connect(workspace / "shop.db") as conn:
        conn.executescript((workspace / "schema.sql").read_text())
        conn.executemany(
            "INSERT INTO products (id, name, description, unit_amount, currency, stripe_product, stripe_price, position)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET name = excluded.name,"
            " description = excluded.description, unit_amount = excluded.unit_amount, currency = excluded.currency,"
            " stripe_product = excluded.stripe_product, stripe_price = excluded.stripe_price,"
            " position = excluded.position",
            rows,
        )
    print(f"seed: {len(rows)} products with prices, coupon {COUPON_ID} with code {PROMOTION_CODE}")


if __name__ == "__main__":
    main()
