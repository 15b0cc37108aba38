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


def create(model, customer):
    """Create the subscription for ``model``; returns it."""
    raise SystemExit(f"model {model!r} is not implemented yet")


def upgrade(subscription):
    """Move the upgrade model's subscription to Pro mid-cycle."""
    raise SystemExit("upgrade is not implemented yet")


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
