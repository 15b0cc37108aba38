"""Studio bookings API (Flask + SQLite). Payments are not wired up yet: see the TODOs."""

import os
import secrets
import sys

import stripe
from flask import Flask, jsonify, request

import db

if os.environ.get("STRIPE_API_BASE"):
    stripe.api_base = os.environ["STRIPE_API_BASE"]
stripe.api_key = os.environ.get("STRIPE_SECRET_KEY", "")
if os.environ.get("STRIPE_API_VERSION"):
    stripe.api_version = os.environ["STRIPE_API_VERSION"]

app = Flask(__name__)
CHANNELS = ("web", "partner")


def error(status, message, **extra):
    """A JSON error body: {"error": {"message": ..., ...}}."""
    return jsonify({"error": {"message": message, **extra}}), status


def booking_json(row):
    return {key: row[key] for key in row.keys()}


@app.get("/health")
def health():
    return {"ok": True}


@app.get("/classes")
def classes():
    with db.connect() as conn:
        rows = conn.execute("SELECT * FROM classes ORDER BY id").fetchall()
    return jsonify([dict(r) for r in rows])


@app.get("/bookings/<booking_id>")
def get_booking(booking_id):
    with db.connect() as conn:
        row = conn.execute("SELECT * FROM bookings WHERE id = ?", (booking_id,)).fetchone()
    if row is None:
        return error(404, f"no booking {booking_id}")
    return jsonify(booking_json(row))


@app.post("/bookings")
def create_booking():
    body = request.get_json(silent=True) or {}
    with db.connect() as conn:
        cls = conn.execute("SELECT * FROM classes WHERE id = ?", (body.get("class_id"),)).fetchone()
    if cls is None:
        return error(400, "unknown class_id")
    email = body.get("email")
    if not email or "@" not in email:
        return error(400, "a valid email is required")
    channel = body.get("channel", "web")
    if channel not in CHANNELS:
        return error(400, "channel must be 'web' or 'partner'")
    amount = body.get("amount", cls["price"])
    if not isinstance(amount, int) or isinstance(amount, bool) or not (
            amount == 0 or cls["min_deposit"] <= amount <= cls["price"]):
        return error(400, f"amount must be 0, or between {cls['min_deposit']} and {cls['price']}")
    if not body.get("payment_method"):
        return error(400, "payment_method is required")
    booking_id = "bk_" + secrets.token_hex(8)
    # TODO: take the payment with Stripe (see PROBLEM.md) and store the booking.
    return error(501, "payments are not implemented yet")


@app.post("/bookings/<booking_id>/refund")
def refund_booking(booking_id):
    # TODO: refund through Stripe (see PROBLEM.md).
    return error(501, "refunds are not implemented yet")


def own_files_only():
    """Reloader exclusions: everything on sys.path except this app's directory (only our edits reload)."""
    here = os.path.dirname(os.path.abspath(__file__))
    return [os.path.join(os.path.abspath(p), "*") for p in sys.path
            if p and os.path.isdir(p) and not here.startswith(os.path.abspath(p))]


if __name__ == "__main__":
    db.connect().close()
    # The reloader picks up edits to this file without restarting the service by hand.
    app.run(host="127.0.0.1", port=int(os.environ.get("APP_PORT", "5000")), threaded=True, use_reloader=True,
            exclude_patterns=own_files_only())
