"""Studio bookings API (Flask + SQLite) taking payments with Stripe PaymentIntents and SetupIntents."""

import ast
import os
import secrets
import sys
import threading
import time

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
    metadata = {"booking_id": booking_id, "class_id": cls["id"], "channel": channel}
    try:
        customer = stripe.Customer.create(email=email, metadata={"booking_id": booking_id})
        if amount == 0:
            # Nothing to charge now: save the card on the customer for later with a SetupIntent.
            intent = stripe.SetupIntent.create(
                customer=customer.id, payment_method=body["payment_method"], confirm=True, usage="off_session",
                payment_method_types=["card"], metadata=metadata)
            ok = intent.status == "succeeded"
        else:
            intent = stripe.PaymentIntent.create(
                amount=amount, currency=cls["currency"], customer=customer.id,
                payment_method=body["payment_method"], confirm=True, payment_method_types=["card"],
                description=f"{cls['name']} for {email}", metadata=metadata)
            ok = intent.status == "succeeded"
    except stripe.CardError as exc:
        # A decline: no booking, and the customer sees why.
        err = exc.error
        return error(402, exc.user_message or str(exc), type="card_error", code=exc.code,
                     decline_code=getattr(err, "decline_code", None))
    except stripe.StripeError as exc:
        return error(502, f"Stripe refused the payment: {exc.user_message or exc}", type="api_error")
    if not ok:
        return error(402, f"the payment was not completed (status {intent.status})", type="card_error",
                     code="payment_incomplete")
    row = {
        "id": booking_id, "class_id": cls["id"], "email": email, "channel": channel,
        "status": "card_saved" if amount == 0 else ("paid" if amount == cls["price"] else "deposit_paid"),
        "price": cls["price"], "currency": cls["currency"], "amount_paid": amount, "amount_refunded": 0,
        "customer": customer.id, "payment_intent": intent.id if amount else None,
        "setup_intent": intent.id if amount == 0 else None, "payment_method": intent.payment_method,
    }
    with db.connect() as conn:
        conn.execute(f"INSERT INTO bookings ({', '.join(row)}) VALUES ({', '.join('?' for _ in row)})",
                     list(row.values()))
        saved = conn.execute("SELECT * FROM bookings WHERE id = ?", (booking_id,)).fetchone()
    return jsonify(booking_json(saved)), 201


@app.post("/bookings/<booking_id>/refund")
def refund_booking(booking_id):
    body = request.get_json(silent=True) or {}
    with db.connect() as conn:
        row = conn.execute("SELECT * FROM bookings WHERE id = ?", (booking_id,)).fetchone()
    if row is None:
        return error(404, f"no booking {booking_id}")
    if row["channel"] == "partner":
        return error(409, "bookings made through a partner are refunded by the partner, not by the studio",
                     code="refund_not_allowed")
    if not row["payment_intent"]:
        return error(409, "nothing was charged for this booking", code="nothing_to_refund")
    left = row["amount_paid"] - row["amount_refunded"]
    amount = body.get("amount", left)
    if not isinstance(amount, int) or isinstance(amount, bool) or amount <= 0:
        return error(400, "amount must be a positive integer")
    if amount > left:
        return error(400, f"only {left} is left to refund", code="amount_too_large")
    try:
        refund = stripe.Refund.create(payment_intent=row["payment_intent"], amount=amount,
                                      reason="requested_by_customer", metadata={"booking_id": booking_id})
    except stripe.StripeError as exc:
        return error(502, f"Stripe refused the refund: {exc.user_message or exc}", type="api_error")
    if refund.status not in ("succeeded", "pending"):
        return error(502, f"the refund did not go through (status {refund.status})")
    refunded = row["amount_refunded"] + amount
    status = "refunded" if refunded >= row["amount_paid"] else "partially_refunded"
    with db.connect() as conn:
        conn.execute("UPDATE bookings SET amount_refunded = ?, status = ? WHERE id = ?", (refunded, status, booking_id))
        saved = conn.execute("SELECT * FROM bookings WHERE id = ?", (booking_id,)).fetchone()
    return jsonify({**booking_json(saved), "refund": refund.id})


def reload_on_edit(interval=1.0):
    """Restart this process in place (same pid and port) when a .py file beside the app changes."""
    here = os.path.dirname(os.path.abspath(__file__))

    def mtimes():
        return {name: os.stat(os.path.join(here, name)).st_mtime_ns for name in os.listdir(here) if name.endswith(".py")}

    def watch(before):
        while True:
            time.sleep(interval)
            try:
                now = mtimes()
            except OSError:  # a file replaced mid-scan: look again next time
                continue
            if now != before:
                # Werkzeug left its listening socket inheritable (fd in WERKZEUG_SERVER_FD); this flag makes
                # the new process serve on it, so no request is refused while the app restarts.
                os.environ["WERKZEUG_RUN_MAIN"] = "true"
                # The new process compares against what was seen here, before it reads its code: an edit made
                # while it starts up is a change to it too, never lost however slow the start.
                os.environ["APP_RELOAD_SEEN"] = repr(sorted(now.items()))
                os.execv(sys.executable, [sys.executable] + sys.argv)

    seen = os.environ.get("APP_RELOAD_SEEN")
    threading.Thread(target=watch, args=(dict(ast.literal_eval(seen)) if seen else mtimes(),), daemon=True).start()


if __name__ == "__main__":
    db.connect().close()
    reload_on_edit()  # edits to the app take effect without restarting the service by hand
    app.run(host="127.0.0.1", port=int(os.environ.get("APP_PORT", "5000")), threaded=True)
