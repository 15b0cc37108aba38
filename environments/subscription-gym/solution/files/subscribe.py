"""Create Sprocket Cloud subscriptions, one business model at a time (see README.md).

    python3 subscribe.py create <model> <customer_id>
    python3 subscribe.py upgrade <subscription_id>
"""

import json
import os
import sys

import stripe

stripe.api_key = os.environ["STRIPE_SECRET_KEY"]
if os.environ.get("STRIPE_API_BASE"):
    stripe.api_base = os.environ["STRIPE_API_BASE"]


def price(lookup_key):
    """The active price with this lookup key."""
    found = stripe.Price.list(lookup_keys=[lookup_key], active=True).data
    if not found:
        sys.exit(f"no price with lookup key {lookup_key}: did the seed run?")
    return found[0].id


def months_from(moment, months):
    """``moment`` plus whole calendar months (what Stripe's monthly periods do)."""
    import calendar
    from datetime import datetime, timezone

    when = datetime.fromtimestamp(moment, timezone.utc)
    year, month = divmod(when.month - 1 + months, 12)
    year, month = when.year + year, month + 1
    day = min(when.day, calendar.monthrange(year, month)[1])
    return int(when.replace(year=year, month=month, day=day).timestamp())


def now_for(customer):
    """The customer's current time: its test clock's frozen time when it has one."""
    clock = stripe.Customer.retrieve(customer).test_clock
    if clock:
        return stripe.test_helpers.TestClock.retrieve(clock).frozen_time
    import time

    return int(time.time())


def create(model, customer):
    """Create the subscription for ``model``; returns it."""
    starter = [{"price": price("gym_starter_monthly")}]
    if model == "trial_14":
        return stripe.Subscription.create(customer=customer, items=starter, trial_period_days=14)
    if model == "anchor_first":
        return stripe.Subscription.create(customer=customer, items=starter,
                                          billing_cycle_anchor_config={"day_of_month": 1},
                                          proration_behavior="create_prorations")
    if model == "coupon_3_months":
        return stripe.Subscription.create(customer=customer, items=[{"price": price("gym_pro_monthly")}],
                                          discounts=[{"coupon": "GYM25X3"}])
    if model == "annual":
        return stripe.Subscription.create(customer=customer, items=[{"price": price("gym_pro_annual")}])
    if model == "usage":
        return stripe.Subscription.create(customer=customer, items=[{"price": price("gym_api_calls")}])
    if model == "seats":
        return stripe.Subscription.create(customer=customer,
                                          items=[{"price": price("gym_pro_monthly"), "quantity": 5}])
    if model == "setup_fee":
        return stripe.Subscription.create(customer=customer, items=starter,
                                          add_invoice_items=[{"price": price("gym_setup_fee")}])
    if model == "upgrade":
        return stripe.Subscription.create(customer=customer, items=starter)
    if model == "fixed_term":
        return stripe.Subscription.create(customer=customer, items=starter,
                                          cancel_at=months_from(now_for(customer), 3))
    sys.exit(f"unknown model {model!r}")


def upgrade(subscription):
    """Move the upgrade model's subscription to Pro mid-cycle, invoicing the prorated difference at once."""
    sub = stripe.Subscription.retrieve(subscription)
    item = sub["items"].data[0]
    return stripe.Subscription.modify(subscription, items=[{"id": item.id, "price": price("gym_pro_monthly")}],
                                      proration_behavior="always_invoice")


def main(argv):
    if len(argv) == 4 and argv[1] == "create":
        sub = create(argv[2], argv[3])
    elif len(argv) == 3 and argv[1] == "upgrade":
        sub = upgrade(argv[2])
    else:
        sys.exit(__doc__)
    print(json.dumps({"subscription": sub.id}))


if __name__ == "__main__":
    main(sys.argv)
