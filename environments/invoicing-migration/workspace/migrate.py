"""Move legacy_bookings.csv into Stripe (Products, Prices, Customers, Invoices) and the bookings table.

Run: python3 migrate.py   (reads STRIPE_SECRET_KEY, STRIPE_API_BASE and STRIPE_API_VERSION; see PROBLEM.md)
"""

import csv
import os
import sys

import stripe

import db

if os.environ.get("STRIPE_API_BASE"):
    stripe.api_base = os.environ["STRIPE_API_BASE"]
stripe.api_key = os.environ.get("STRIPE_SECRET_KEY", "")
if os.environ.get("STRIPE_API_VERSION"):
    stripe.api_version = os.environ["STRIPE_API_VERSION"]

CSV = os.path.join(os.path.dirname(os.path.abspath(__file__)), "legacy_bookings.csv")


def legacy_rows():
    with open(CSV, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def main():
    # TODO: the catalogue as Products and Prices, a Customer per email, an Invoice per legacy booking in its
    # final state, and a bookings row for each (see PROBLEM.md). Running it twice must change nothing.
    sys.exit("migrate.py: not implemented yet")


if __name__ == "__main__":
    main()
