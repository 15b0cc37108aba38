"""Lumen Lamps: a one-page shop (Flask + SQLite) selling through Stripe Checkout.

Orders are fulfilled (handed to the warehouse, see fulfilment.py) when Stripe tells us they are
paid: a signed checkout.session.completed (or async_payment_succeeded) event at /webhooks/stripe.
The success page only shows the order; a customer who closes the tab still gets their lamp.
"""

import os
import secrets
import sqlite3
import time
from pathlib import Path

import stripe
from flask import Flask, abort, jsonify, redirect, render_template, request

from fulfilment import fulfil_order

HERE = Path(__file__).resolve().parent


def load_env_file(path):
    """KEY=VALUE lines from ``path`` into os.environ (values already set win)."""
    if path.is_file():
        for line in path.read_text().splitlines():
            key, sep, value = line.strip().partition("=")
            if sep and not key.startswith("#"):
                os.environ.setdefault(key.strip(), value.strip())


load_env_file(HERE / ".env")  # written by the setup script: STRIPE_WEBHOOK_SECRET, STRIPE_WEBHOOK_ENDPOINT
stripe.api_key = os.environ.get("STRIPE_SECRET_KEY", "")
if os.environ.get("STRIPE_API_BASE"):
    stripe.api_base = os.environ["STRIPE_API_BASE"]
if os.environ.get("STRIPE_API_VERSION"):
    stripe.api_version = os.environ["STRIPE_API_VERSION"]

DATABASE = os.environ.get("DATABASE_PATH") or str(HERE / "shop.db")
PUBLIC_URL = (os.environ.get("APP_URL") or f"http://127.0.0.1:{os.environ.get('APP_PORT', '5000')}").rstrip("/")
app = Flask(__name__)


def db():
    conn = sqlite3.connect(DATABASE, timeout=10)
    conn.row_factory = sqlite3.Row
    return conn


@app.get("/health")
def health():
    return {"ok": True}


@app.get("/")
def index():
    with db() as conn:
        products = conn.execute("SELECT * FROM products ORDER BY position").fetchall()
    return render_template("index.html", products=products)


@app.post("/buy/<slug>")
def buy(slug):
    with db() as conn:
        product = conn.execute("SELECT * FROM products WHERE slug = ?", (slug,)).fetchone()
    if product is None:
        abort(404)
    order_id = "ord_" + secrets.token_hex(6)
    session = stripe.checkout.Session.create(
        mode="payment",
        line_items=[{"price": product["stripe_price"], "quantity": 1}],
        client_reference_id=order_id,
        metadata={"order_id": order_id},
        success_url=f"{PUBLIC_URL}/success?session_id={{CHECKOUT_SESSION_ID}}",
        cancel_url=f"{PUBLIC_URL}/",
    )
    with db() as conn:
        conn.execute("INSERT INTO orders (id, product, status, checkout_session, created_at) VALUES (?, ?, 'pending', ?, ?)",
                     (order_id, slug, session.id, int(time.time())))
    return redirect(session.url, code=303)


@app.get("/success")
def success():
    session = stripe.checkout.Session.retrieve(request.args.get("session_id", ""))
    with db() as conn:
        order = conn.execute("SELECT * FROM orders WHERE id = ?", (session.client_reference_id,)).fetchone()
        if order is None:
            abort(404)
    # Only a receipt page: fulfilment waits for Stripe's signed event (the redirect can be faked or never happen).
    return render_template("success.html", order=order)


def fulfil_once(order_id, source):
    """Fulfil ``order_id`` unless it already is; the guarded UPDATE makes concurrent duplicates a no-op."""
    with db() as conn:
        conn.execute("BEGIN IMMEDIATE")
        claimed = conn.execute("SELECT COUNT(*) FROM orders WHERE id = ?", (order_id,)).fetchone()[0]
        if claimed:
            fulfil_order(conn, order_id, source)
        return bool(claimed)


@app.post("/webhooks/stripe")
def stripe_webhook():
    payload = request.get_data()  # the raw bytes: the signature covers them exactly
    try:
        event = stripe.Webhook.construct_event(payload, request.headers.get("Stripe-Signature", ""),
                                               os.environ.get("STRIPE_WEBHOOK_SECRET", ""))
    except ValueError:
        return jsonify({"error": "invalid payload"}), 400
    except stripe.SignatureVerificationError:
        return jsonify({"error": "invalid signature"}), 400
    if event.type in ("checkout.session.completed", "checkout.session.async_payment_succeeded"):
        session = event.data.object
        if session.payment_status in ("paid", "no_payment_required"):
            order_id = session.client_reference_id  # set when the session was created in /buy
            fulfilled = fulfil_once(order_id, f"{event.type} {event.id}")
            return jsonify({"received": True, "fulfilled": fulfilled})
    return jsonify({"received": True})


@app.get("/orders/<order_id>")
def get_order(order_id):
    with db() as conn:
        order = conn.execute("SELECT * FROM orders WHERE id = ?", (order_id,)).fetchone()
        if order is None:
            abort(404)
        shipped = conn.execute("SELECT COUNT(*) FROM fulfillments WHERE order_id = ?", (order_id,)).fetchone()[0]
    return jsonify({**dict(order), "fulfillments": shipped})


if __name__ == "__main__":
    with db() as conn:
        conn.executescript((HERE / "schema.sql").read_text())
    app.run(host="127.0.0.1", port=int(os.environ.get("APP_PORT", "5000")), debug=False, use_reloader=False)
