"""Seed for webhook-fulfillment: the lamps and their prices, and the shop's webhook endpoint.

Run with the workspace as the current directory. Writes the catalogue into ``shop.db`` and the
endpoint's id and signing secret into ``.env`` (STRIPE_WEBHOOK_ENDPOINT, STRIPE_WEBHOOK_SECRET).
The endpoint's URL is ``$WEBHOOK_URL`` when set (real Stripe needs a public address, e.g. a tunnel to
the app), else ``$APP_URL/webhooks/stripe``. Idempotent: products by fixed id, prices by lookup key,
and the endpoint recorded in ``.env`` is reused while it still exists with the same URL; an endpoint
at our URL whose secret we no longer have is deleted, so no two endpoints deliver the same events.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path

CURRENCY = "usd"
# (slug, Stripe product id, name, unit amount in cents, stock)
CATALOGUE = [
    ("desk-lamp", "lumen_desk_lamp", "Brass desk lamp", 8900, 40),
    ("lantern", "lumen_lantern", "Paper lantern", 2400, 120),
]
EVENTS = ["checkout.session.completed", "checkout.session.async_payment_succeeded"]


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


def read_env(path: Path) -> dict[str, str]:
    """KEY=VALUE lines of a .env file (missing file: empty)."""
    out = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            key, sep, value = line.strip().partition("=")
            if sep and not key.startswith("#"):
                out[key.strip()] = value.strip()
    return out


def _product(client, product_id: str, name: str):
    import stripe

    try:
        return client.v1.products.retrieve(product_id)
    except stripe.InvalidRequestError as exc:
        if exc.http_status != 404:
            raise
    return client.v1.products.create({"id": product_id, "name": name})


def _price(client, slug: str, product_id: str, amount: int):
    key = f"lumen_{slug.replace('-', '_')}_{CURRENCY}"
    found = client.v1.prices.list({"lookup_keys": [key], "active": True, "limit": 1}).data
    if found and found[0].unit_amount == amount and found[0].product == product_id:
        return found[0]
    return client.v1.prices.create({"product": product_id, "unit_amount": amount, "currency": CURRENCY,
                                    "lookup_key": key, "transfer_lookup_key": True})


def _endpoint(client, url: str, known: dict[str, str]) -> tuple[str, str]:
    """(endpoint id, secret): the one in .env if it still exists at ``url``, else a new one."""
    import stripe

    if known.get("STRIPE_WEBHOOK_ENDPOINT") and known.get("STRIPE_WEBHOOK_SECRET"):
        try:
            endpoint = client.v1.webhook_endpoints.retrieve(known["STRIPE_WEBHOOK_ENDPOINT"])
            if endpoint.url == url and endpoint.status == "enabled":
                return endpoint.id, known["STRIPE_WEBHOOK_SECRET"]
        except stripe.InvalidRequestError as exc:
            if exc.http_status != 404:
                raise
    for stale in client.v1.webhook_endpoints.list({"limit": 100}).data:
        if stale.url == url:
            client.v1.webhook_endpoints.delete(stale.id)
    created = client.v1.webhook_endpoints.create({"url": url, "enabled_events": EVENTS,
                                                 "description": "Lumen Lamps order fulfilment"})
    return created.id, created.secret


def main() -> None:
    client = _client()
    workspace = Path.cwd()
    rows = []
    for position, (slug, product_id, name, amount, stock) in enumerate(CATALOGUE):
        _product(client, product_id, name)
        price = _price(client, slug, product_id, amount)
        rows.append((slug, name, amount, CURRENCY, price.id, stock, position))
    with sqlite3.connect(workspace / "shop.db") as conn:
        conn.executescript((workspace / "schema.sql").read_text())
        conn.executemany(
            "INSERT INTO products (slug, name, unit_amount, currency, stripe_price, stock, position)"
            " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (slug) DO UPDATE SET name = excluded.name,"
            " unit_amount = excluded.unit_amount, currency = excluded.currency,"
            " stripe_price = excluded.stripe_price, position = excluded.position", rows)

    app_url = os.environ.get("APP_URL", "").rstrip("/")
    url = os.environ.get("WEBHOOK_URL") or (f"{app_url}/webhooks/stripe" if app_url else "")
    if not url:
        sys.exit("seed: set APP_URL (or WEBHOOK_URL) so the webhook endpoint has somewhere to deliver")
    env_path = workspace / ".env"
    known = read_env(env_path)
    endpoint_id, secret = _endpoint(client, url, known)
    known.update(STRIPE_WEBHOOK_ENDPOINT=endpoint_id, STRIPE_WEBHOOK_SECRET=secret)
    env_path.write_text("".join(f"{k}={v}\n" for k, v in known.items()))
    print(f"seed: {len(rows)} products with prices; webhook endpoint {endpoint_id} -> {url}")


if __name__ == "__main__":
    main()
