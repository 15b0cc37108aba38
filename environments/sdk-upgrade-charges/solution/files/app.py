"""Receipts service (Flask + SQLite): takes card payments and serves their receipts.

Other teams call this over HTTP (see README.md for the response shapes they rely on).
It runs in its own virtualenv, .venv (see requirements.txt and bootstrap.sh).
"""

import os
import sqlite3
import time

import stripe
from flask import Flask, jsonify, request

# No api_version here: the SDK sends the version it is pinned to (and was tested against).
stripe.api_key = os.environ.get("STRIPE_SECRET_KEY", "")
if os.environ.get("STRIPE_API_BASE"):
    stripe.api_base = os.environ["STRIPE_API_BASE"]

DATABASE = os.environ.get("DATABASE_PATH") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "payments.db")
app = Flask(__name__)


def db():
    conn = sqlite3.connect(DATABASE)
    conn.row_factory = sqlite3.Row
    conn.execute("CREATE TABLE IF NOT EXISTS payments (id TEXT PRIMARY KEY, order_ref TEXT NOT NULL,"
                 " amount INTEGER NOT NULL, currency TEXT NOT NULL, created_at INTEGER NOT NULL)")
    return conn


def error(http_status, message, **extra):
    return jsonify({"error": {"message": message, **extra}}), http_status


def charge_json(charge):
    """What callers know as a payment's receipt: the charge, its card and amounts."""
    card = charge.payment_method_details.card
    return {
        "charge": charge.id,
        "amount_captured": charge.amount_captured,
        "amount_refunded": charge.amount_refunded,
        "paid": charge.paid,
        "captured": charge.captured,
        "refunded": charge.refunded,
        "receipt_url": charge.receipt_url,
        "card": {"brand": card.brand, "last4": card.last4, "exp_month": card.exp_month, "exp_year": card.exp_year},
        "created": charge.created,
    }


def first_charge(intent):
    """The PaymentIntent's charge; needs the intent fetched with expand=["latest_charge"]."""
    return intent.latest_charge  # None until the intent has been confirmed


def payment_json(intent):
    charge = first_charge(intent)
    return {
        "id": intent.id,
        "order": intent.metadata.to_dict().get("order"),
        "status": intent.status,
        "amount": intent.amount,
        "amount_received": intent.amount_received,
        "currency": intent.currency,
        "receipt": charge_json(charge) if charge else None,
    }


@app.get("/health")
def health():
    return {"ok": True}


@app.post("/payments")
def create_payment():
    body = request.get_json(silent=True) or {}
    order, amount = body.get("order"), body.get("amount")
    if not order or not isinstance(amount, int) or isinstance(amount, bool) or amount < 50:
        return error(400, "order (text) and amount (integer, at least 50) are required")
    capture = body.get("capture", True)
    try:
        intent = stripe.PaymentIntent.create(
            amount=amount,
            currency=body.get("currency", "usd"),
            payment_method=body.get("payment_method", "pm_card_visa"),
            payment_method_types=["card"],
            capture_method="automatic" if capture else "manual",
            metadata={"order": order},
        )
        intent = stripe.PaymentIntent.confirm(intent.id, expand=["latest_charge"])
    except stripe.CardError as exc:
        err = exc.json_body["error"]
        return error(402, err.get("message"), code=err.get("code"), decline_code=err.get("decline_code"))
    with db() as conn:
        conn.execute("INSERT INTO payments VALUES (?, ?, ?, ?, ?)",
                     (intent.id, order, intent.amount, intent.currency, int(time.time())))
    return jsonify(payment_json(intent)), 201


@app.post("/payments/<pi_id>/capture")
def capture_payment(pi_id):
    try:
        intent = stripe.PaymentIntent.capture(pi_id, expand=["latest_charge"])
    except stripe.InvalidRequestError as exc:
        return error(exc.http_status or 400, exc.json_body["error"].get("message"))
    return jsonify(payment_json(intent))


@app.get("/payments/<pi_id>/receipt")
def receipt(pi_id):
    try:
        intent = stripe.PaymentIntent.retrieve(pi_id, expand=["latest_charge"])
    except stripe.InvalidRequestError as exc:
        if exc.http_status == 404:
            return error(404, f"no payment {pi_id}")
        raise
    charge = first_charge(intent)
    if charge is None:
        return error(409, f"payment {pi_id} has no charge yet", status=intent.status)
    return jsonify({"payment": intent.id, "amount": intent.amount, "currency": intent.currency,
                    **charge_json(charge)})


if __name__ == "__main__":
    db().close()
    app.run(host="127.0.0.1", port=int(os.environ.get("APP_PORT", "5000")), debug=False, use_reloader=False)
