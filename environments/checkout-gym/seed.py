"""Seed for checkout-gym: Pedal & Co.'s catalogue, two promotion codes, and the hidden challenge sessions.

Run with the workspace as the current directory. It plays the "hidden server": for every
challenge below it creates a hosted Checkout Session from the challenge's create parameters
(which the agent never sees) and writes only the catalogue and each challenge's page URL into
``gym.db``. Idempotent: products, coupons and codes are found by id or code, and a challenge
whose session already exists (metadata ``gym_target``) is not created again. The grader imports
CHALLENGES, so the challenges have one source of truth.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

CURRENCY = "usd"
# (slug, product id, name, unit amount in cents, recurring interval or None)
CATALOGUE = [
    ("helmet", "pedal_helmet", "Aero road helmet", 5900, None),
    ("gloves", "pedal_gloves", "Gel cycling gloves", 2400, None),
    ("bottle", "pedal_bottle", "Insulated bottle", 1200, None),
    ("lights", "pedal_lights", "USB light set", 3500, None),
    ("tuneup", "pedal_tuneup", "Workshop tune-up", 4500, None),
    ("membership", "pedal_membership", "Ride club membership", 1900, "month"),
    ("club", "pedal_club", "Ride club annual pass", 19000, "year"),
    ("trailfund", "pedal_trail_fund", "Trail fund donation", 1000, None),
]
# (coupon id, coupon fields, promotion code)
PROMOTIONS = [
    ("pedal-ride-10", {"percent_off": 10, "duration": "once", "name": "Ride 10% off"}, "RIDE10"),
    ("pedal-spring-5", {"amount_off": 500, "currency": CURRENCY, "duration": "once", "name": "Spring $5 off"},
     "SPRING5"),
]
# "price:<slug>" and "promo:<CODE>" are resolved to ids when the session is created.
CHALLENGES: list[dict[str, Any]] = [
    {"title": "Gloves and a bottle", "params": {
        "mode": "payment", "line_items": [{"price": "price:gloves", "quantity": 2},
                                          {"price": "price:bottle", "quantity": 1}]}},
    {"title": "A helmet, codes welcome", "params": {
        "mode": "payment", "line_items": [{"price": "price:helmet", "quantity": 1}], "allow_promotion_codes": True}},
    {"title": "Lights, already discounted", "params": {
        "mode": "payment", "line_items": [{"price": "price:lights", "quantity": 1}],
        "discounts": [{"promotion_code": "promo:RIDE10"}]}},
    {"title": "A helmet shipped abroad", "params": {
        "mode": "payment", "line_items": [{"price": "price:helmet", "quantity": 1}],
        "shipping_address_collection": {"allowed_countries": ["US", "CA", "GB"]}}},
    {"title": "Bottles, the buyer picks how many", "params": {
        "mode": "payment", "line_items": [{"price": "price:bottle", "quantity": 3,
                                           "adjustable_quantity": {"enabled": True}}]}},
    {"title": "Book a tune-up", "params": {
        "mode": "payment", "line_items": [{"price": "price:tuneup", "quantity": 1}], "submit_type": "book",
        "phone_number_collection": {"enabled": True},
        "custom_fields": [{"key": "bike_model", "label": {"type": "custom", "custom": "Bike model"},
                           "type": "text"}]}},
    {"title": "A membership with a trial", "params": {
        "mode": "subscription", "line_items": [{"price": "price:membership", "quantity": 1}],
        "subscription_data": {"trial_period_days": 14}}},
    {"title": "The annual pass, billed to an address", "params": {
        "mode": "subscription", "line_items": [{"price": "price:club", "quantity": 1}],
        "billing_address_collection": "required", "allow_promotion_codes": True}},
    {"title": "Save a card for the fitting", "params": {
        "mode": "setup", "currency": CURRENCY,
        "custom_text": {"submit": {"message": "We only charge you after your fitting."}}}},
    {"title": "Helmet and lights, with a size", "params": {
        "mode": "payment", "line_items": [{"price": "price:helmet", "quantity": 1},
                                          {"price": "price:lights", "quantity": 2}],
        "custom_fields": [{"key": "helmet_size", "label": {"type": "custom", "custom": "Helmet size"},
                           "type": "dropdown", "dropdown": {"options": [
                               {"label": "Small", "value": "s"}, {"label": "Medium", "value": "m"},
                               {"label": "Large", "value": "l"}]}}],
        "consent_collection": {"promotions": "auto"}, "tax_id_collection": {"enabled": True}}},
    {"title": "Gloves for a rider we know", "params": {
        "mode": "payment", "line_items": [{"price": "price:gloves", "quantity": 1}],
        "customer_email": "mara.okafor@example.com"}},
    {"title": "Pour le fonds des sentiers", "params": {
        "mode": "payment", "line_items": [{"price": "price:trailfund", "quantity": 2}], "submit_type": "donate",
        "locale": "fr"}},
]


def lookup_key(slug: str) -> str:
    return f"pedal_{slug}_{CURRENCY}"


def resolve(value: Any, prices: dict[str, str], promos: dict[str, str]) -> Any:
    """``value`` with every ``price:<slug>`` / ``promo:<CODE>`` string replaced by the object's id."""
    if isinstance(value, dict):
        return {k: resolve(v, prices, promos) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, prices, promos) for v in value]
    if isinstance(value, str) and value.startswith("price:"):
        return prices[value.removeprefix("price:")]
    if isinstance(value, str) and value.startswith("promo:"):
        return promos[value.removeprefix("promo:")]
    return value


def _client():
    import stripe

    key = os.environ.get("STRIPE_SECRET_KEY")
    if not key:
        sys.exit("seed: STRIPE_SECRET_KEY is not set")
    base = os.environ.get("STRIPE_API_BASE")
    kwargs: dict[str, Any] = {"base_addresses": {"api": base}} if base else {}
    if os.environ.get("STRIPE_API_VERSION"):
        kwargs["stripe_version"] = os.environ["STRIPE_API_VERSION"]
    return stripe.StripeClient(key, **kwargs)


def _retrieve_or_create(retrieve, create, object_id: str, fields: dict[str, Any]):
    import stripe

    try:
        return retrieve(object_id)
    except stripe.InvalidRequestError as exc:
        if exc.http_status != 404:
            raise
    return create({"id": object_id, **fields})


def _catalogue(client) -> dict[str, str]:
    prices = {}
    for slug, product_id, name, amount, interval in CATALOGUE:
        _retrieve_or_create(client.v1.products.retrieve, client.v1.products.create, product_id, {"name": name})
        found = client.v1.prices.list({"lookup_keys": [lookup_key(slug)], "active": True, "limit": 1}).data
        if not found:
            fields: dict[str, Any] = {"product": product_id, "unit_amount": amount, "currency": CURRENCY,
                                      "lookup_key": lookup_key(slug)}
            if interval:
                fields["recurring"] = {"interval": interval}
            found = [client.v1.prices.create(fields)]
        prices[slug] = found[0].id
    return prices


def _promotions(client) -> dict[str, str]:
    import stripe

    promos = {}
    for coupon_id, fields, code in PROMOTIONS:
        _retrieve_or_create(client.v1.coupons.retrieve, client.v1.coupons.create, coupon_id, fields)
        found = client.v1.promotion_codes.list({"code": code, "active": True, "limit": 1}).data
        if not found:
            try:  # promotion[coupon] from 2025-09-30, coupon before
                found = [client.v1.promotion_codes.create({"code": code, "promotion": {"type": "coupon",
                                                                                       "coupon": coupon_id}})]
            except stripe.InvalidRequestError as exc:
                if exc.param not in ("promotion", "coupon"):
                    raise
                found = [client.v1.promotion_codes.create({"code": code, "coupon": coupon_id})]
        promos[code] = found[0].id
    return promos


def targets(client) -> dict[int, Any]:
    """``{challenge number: its hidden session}``, the first one created for each."""
    out: dict[int, Any] = {}
    for session in client.v1.checkout.sessions.list({"limit": 100}).auto_paging_iter():
        number = (session.metadata.to_dict() if session.metadata else {}).get("gym_target")
        if number and number.isdigit() and (int(number) not in out or session.created < out[int(number)].created):
            out[int(number)] = session
    return out


def main() -> None:
    client = _client()
    prices, promos = _catalogue(client), _promotions(client)
    existing = targets(client)
    app_url = os.environ.get("APP_URL", "http://127.0.0.1")
    pages = []
    for number, challenge in enumerate(CHALLENGES, 1):
        session = existing.get(number)
        if session is None:
            params = resolve(challenge["params"], prices, promos)
            params.update(success_url=f"{app_url}/challenges/{number}/done", metadata={"gym_target": str(number)})
            session = client.v1.checkout.sessions.create(params)
        pages.append((number, challenge["title"], session.url))

    workspace = Path.cwd()
    with sqlite3.connect(workspace / "gym.db") as conn:
        conn.executescript((workspace / "schema.sql").read_text())
        conn.executemany("INSERT INTO catalogue (slug, name, price_id, unit_amount, currency, recurring) VALUES"
                         " (?, ?, ?, ?, ?, ?) ON CONFLICT (slug) DO UPDATE SET price_id = excluded.price_id",
                         [(slug, name, prices[slug], amount, CURRENCY, interval)
                          for slug, _product, name, amount, interval in CATALOGUE])
        conn.executemany("INSERT INTO challenges (number, title, page_url) VALUES (?, ?, ?) ON CONFLICT (number)"
                         " DO UPDATE SET title = excluded.title, page_url = excluded.page_url", pages)
    print(f"seed: {len(CATALOGUE)} prices, {len(PROMOTIONS)} promotion codes, {len(pages)} challenge pages")


if __name__ == "__main__":
    main()
