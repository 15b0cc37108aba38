"""Seed for subscription-gym: Sprocket Cloud's prices (by lookup key), the API-call meter and the GYM25X3 coupon.

Idempotent: prices are found by lookup key, the meter by event name and the coupon by id before anything is made,
so running it again (or against a test-mode account that has them) changes nothing.
"""

from __future__ import annotations

import os

import stripe

stripe.api_key = os.environ["STRIPE_SECRET_KEY"]
if os.environ.get("STRIPE_API_BASE"):
    stripe.api_base = os.environ["STRIPE_API_BASE"]

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


def meter() -> str:
    for existing in stripe.billing.Meter.list(status="active").auto_paging_iter():
        if existing.event_name == METER_EVENT:
            return existing.id
    return stripe.billing.Meter.create(display_name="API calls", event_name=METER_EVENT,
                                       default_aggregation={"formula": "sum"},
                                       customer_mapping={"event_payload_key": "stripe_customer_id",
                                                         "type": "by_id"},
                                       value_settings={"event_payload_key": "value"}).id


def main() -> None:
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
    print(f"catalogue ready: {len(PRICES)} prices, meter {meter_id}, coupon {COUPON}")


if __name__ == "__main__":
    main()
