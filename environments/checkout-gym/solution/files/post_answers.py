"""Post each challenge's answer (answers.json) to the gym app and print what it said.

In answers.json, "price:<slug>" names a catalogue product's price and "promo:<CODE>" a promotion code;
both are looked up here (the catalogue from the app, codes from Stripe) before posting.
"""

import json
import os
import sys
import urllib.error
import urllib.request

import stripe

APP = os.environ["APP_URL"]
answers = json.load(open(sys.argv[1] if len(sys.argv) > 1 else "answers.json"))


def call(path, body=None):
    """(status, text) of a GET, or of a POST of ``body`` as JSON."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(APP + path, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


prices = {row["slug"]: row["price_id"] for row in json.loads(call("/api/catalogue")[1])["data"]}
base = os.environ.get("STRIPE_API_BASE")
client = stripe.StripeClient(os.environ["STRIPE_SECRET_KEY"], **({"base_addresses": {"api": base}} if base else {}))


def resolve(value):
    if isinstance(value, dict):
        return {k: resolve(v) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v) for v in value]
    if isinstance(value, str) and value.startswith("price:"):
        return prices[value.removeprefix("price:")]
    if isinstance(value, str) and value.startswith("promo:"):
        return client.v1.promotion_codes.list({"code": value.removeprefix("promo:"), "limit": 1}).data[0].id
    return value


for number, params in answers.items():
    status, text = call(f"/challenges/{number}/attempt", resolve(params))
    print(f"challenge {number}: HTTP {status} {text.strip()[:300]}")
