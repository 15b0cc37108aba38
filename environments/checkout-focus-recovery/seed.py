"""Seed for checkout-focus-recovery: Trailhead Outfitters' cart and promotion codes, and the order the task asks for.

Run with the workspace as the current directory; it writes ``shop.db`` (no Stripe objects are needed before
the order: the app creates the Customer and the PaymentIntent). Idempotent. The grader imports the
constants below, so the expected order has one source of truth.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

CURRENCY = "usd"
CART = [("trail-shoes", "Trail running shoes", 12000, 1)]  # (sku, name, unit amount in cents, quantity)
PROMOTIONS = [("SAVE15", 15), ("WELCOME5", 5)]  # (code, percent off)
# What the task asks the agent to enter, field by field.
CUSTOMER = {"email": "jenny.rosen@example.com", "name": "Jenny Rosen", "line1": "510 Townsend St",
            "city": "San Francisco", "postal_code": "94103", "country": "US"}
CARD = {"number": "4242 4242 4242 4242", "name": "Jenny Rosen"}
PROMOTION_CODE = "SAVE15"


def subtotal() -> int:
    return sum(amount * quantity for _sku, _name, amount, quantity in CART)


def expected_total() -> int:
    percent = dict(PROMOTIONS)[PROMOTION_CODE]
    return subtotal() - round(subtotal() * percent / 100)


def main() -> None:
    workspace = Path.cwd()
    with sqlite3.connect(workspace / "shop.db") as conn:
        conn.executescript((workspace / "schema.sql").read_text())
        conn.executemany("INSERT INTO cart (sku, name, unit_amount, quantity) VALUES (?, ?, ?, ?) ON CONFLICT (sku)"
                         " DO UPDATE SET name = excluded.name, unit_amount = excluded.unit_amount,"
                         " quantity = excluded.quantity", CART)
        conn.executemany("INSERT INTO promotion_codes (code, percent_off) VALUES (?, ?) ON CONFLICT (code)"
                         " DO UPDATE SET percent_off = excluded.percent_off", PROMOTIONS)
    print(f"seed: cart of {len(CART)} item(s), {len(PROMOTIONS)} promotion codes")


if __name__ == "__main__":
    main()
