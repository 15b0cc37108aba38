"""Seed for subscription-gym: Sprocket Cloud's Stripe catalogue and the plans app's database.

Stripe: the prices (by lookup key), the API-call meter and the GYM25X3 coupon. The database (``plans.db`` in the
workspace, through the workspace's ``db`` module): the plans the product team sells, each described in its own
words, and three demo accounts whose Stripe customers have a default card.

Idempotent: prices are found by lookup key, the meter by event name, the coupon by id and the demo customers by
email before anything is made, and rows are written with INSERT OR REPLACE, so running it again (or against a
test-mode account that has them) makes nothing twice. Runs in the workspace with the episode's STRIPE_* variables.
"""

from __future__ import annotations

import os
import sys

import stripe

sys.path.insert(0, os.getcwd())
import db  # noqa: E402  (the workspace's own module)

stripe.api_key = os.environ["STRIPE_SECRET_KEY"]
if os.environ.get("STRIPE_API_BASE"):
    stripe.api_base = os.environ["STRIPE_API_BASE"]
if os.environ.get("STRIPE_API_VERSION"):
    stripe.api_version = os.environ["STRIPE_API_VERSION"]

METER_EVENT = "gym_api_call"
COUPON = "GYM25X3"
# lookup key, product name, unit amount (cents), recurring (None: one-time)
PRICES = [
    ("gym_starter_monthly", "Sprocket Starter", 2000, {"interval": "month"}),
    ("gym_pro_monthly", "Sprocket Pro", 5000, {"interval": "month"}),
    ("gym_pro_annual", "Sprocket Pro (yearly)", 50000, {"interval": "year"}),
    ("gym_api_calls", "Sprocket API calls", 2, {"interval": "month", "usage_type": "metered"}),
    ("gym_setup_fee", "Sprocket onboarding", 9900, None),
]

# The plans as the product team wrote them up for the pricing page (id, name, description).
PLANS = [
    ("trial_14", "Starter, free trial",
     "Teams try Starter free for 14 days. When the trial is over their card is charged the monthly Starter price, "
     "and again every month after that."),
    ("anchor_first", "Starter, billed on the 1st",
     "Finance wants every Starter renewal on the 1st of the month. A team that signs up mid-month pays at once "
     "for the days left until the 1st (pro rata), then the full Starter price on each 1st."),
    ("coupon_3_months", "Pro launch offer",
     "One Pro seat at 25% off for the first three months (our 'GYM25X3' promotion), full price from the fourth "
     "month on."),
    ("annual", "Pro, yearly",
     "Pro paid once a year, up front, at the yearly price."),
    ("usage", "Pay as you go",
     "No monthly fee: only the API calls, 2 cents each, as our meter counts them. At the end of each month the "
     "team is billed for what it used that month."),
    ("seats", "Pro for teams of five",
     "Pro for a team of 5 seats, each seat at the monthly Pro price."),
    ("setup_fee", "Starter with onboarding",
     "Starter monthly, plus our one-time onboarding fee on the first invoice only."),
    ("upgrade", "Starter, upgradable to Pro",
     "Starter monthly. When a team moves up to Pro in the middle of a month (POST /accounts/<id>/upgrade) it pays "
     "the prorated difference for the rest of that month right away, not at the next renewal."),
    ("fixed_term", "Starter, three-month pilot",
     "Starter for exactly three paid months; after the third month the subscription ends by itself, with no "
     "further invoice."),
]

# Demo accounts (id, company, email): their Stripe customers have pm_card_visa as the default card.
ACCOUNTS = [
    ("ac_northwind", "Northwind Robotics", "billing@northwind.example"),
    ("ac_globex", "Globex Analytics", "finance@globex.example"),
    ("ac_initech", "Initech Labs", "ap@initech.example"),
]


def meter() -> str:
    for existing in stripe.billing.Meter.list(status="active").auto_paging_iter():
        if existing.event_name == METER_EVENT:
            return existing.id
    return stripe.billing.Meter.create(display_name="API calls", event_name=METER_EVENT,
                                       default_aggregation={"formula": "sum"},
                                       customer_mapping={"event_payload_key": "stripe_customer_id",
                                                         "type": "by_id"},
                                       value_settings={"event_payload_key": "value"}).id


def catalogue() -> str:
    meter_id = meter()
    for key, name, amount, recurring in PRICES:
        if stripe.Price.list(lookup_keys=[key], active=True).data:
            continue
        params = {"currency": "usd", "unit_amount": amount, "lookup_key": key, "product_data": {"name": name}}
        if recurring:
            params["recurring"] = {**recurring, **({"meter": meter_id} if recurring.get("usage_type") else {})}
        stripe.Price.create(**params)
    try:
        stripe.Coupon.retrieve(COUPON)
    except stripe.InvalidRequestError:
        stripe.Coupon.create(id=COUPON, percent_off=25, duration="repeating", duration_in_months=3,
                             name="25% off for 3 months")
    return meter_id


def customer(company: str, email: str) -> str:
    found = stripe.Customer.list(email=email, limit=1).data
    if found:
        return found[0].id
    return stripe.Customer.create(name=company, email=email, payment_method="pm_card_visa",
                                  invoice_settings={"default_payment_method": "pm_card_visa"}).id


def main() -> None:
    meter_id = catalogue()
    conn = db.connect()
    conn.executemany("INSERT OR REPLACE INTO plans (id, position, name, description) VALUES (?, ?, ?, ?)",
                     [(plan_id, n, name, text) for n, (plan_id, name, text) in enumerate(PLANS)])
    for account_id, company, email in ACCOUNTS:
        known = conn.execute("SELECT stripe_customer FROM accounts WHERE id = ?", (account_id,)).fetchone()
        if known is None:
            conn.execute("INSERT INTO accounts (id, company, email, stripe_customer) VALUES (?, ?, ?, ?)",
                         (account_id, company, email, customer(company, email)))
    conn.commit()
    conn.close()
    print(f"catalogue ready: {len(PRICES)} prices, meter {meter_id}, coupon {COUPON}; "
          f"{os.path.relpath(db.path())}: {len(PLANS)} plans, {len(ACCOUNTS)} accounts")


if __name__ == "__main__":
    main()
