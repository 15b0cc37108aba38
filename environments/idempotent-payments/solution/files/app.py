"""Orders API of a small online shop (Flask + SQLite), paying orders safely under retries and Stripe failures."""

import ast
import os
import random
import sys
import threading
import time

import stripe
from flask import Flask, jsonify, request

import db
import settings

app = Flask(__name__)

# Least privilege: the restricted key (PaymentIntents: write) is all this app needs; never the full secret key.
# Retries are ours (below) so every attempt of one payment reuses one idempotency key.
client = stripe.StripeClient(
    os.environ["STRIPE_RESTRICTED_KEY"],
    base_addresses={"api": settings.STRIPE_API_BASE} if settings.STRIPE_API_BASE else None,
    stripe_version=settings.STRIPE_API_VERSION,
    max_network_retries=0,
)
MAX_ATTEMPTS = 5
RETRY_STATUSES = {409, 429}  # plus every 5xx


def migrate():
    """Count declined attempts per order: a new attempt (another card) needs a new idempotency key."""
    with db.connect() as conn:
        columns = {row["name"] for row in conn.execute("PRAGMA table_info(orders)")}
        if "pay_attempts" not in columns:
            conn.execute("ALTER TABLE orders ADD COLUMN pay_attempts INTEGER NOT NULL DEFAULT 0")


migrate()


def retryable(exc):
    if isinstance(exc, stripe.APIConnectionError):
        return True
    status = getattr(exc, "http_status", None)
    return status in RETRY_STATUSES or (status is not None and status >= 500)


def create_payment_intent(params, idempotency_key):
    """Create (and confirm) a PaymentIntent, retrying 409/429/5xx and network errors with exponential backoff.

    Every attempt sends the same idempotency key, so a request that reached Stripe but whose answer was lost
    is replayed by Stripe instead of charging again.
    """
    for attempt in range(MAX_ATTEMPTS):
        try:
            return client.v1.payment_intents.create(params=params, options={"idempotency_key": idempotency_key})
        except stripe.StripeError as exc:
            if not retryable(exc) or attempt == MAX_ATTEMPTS - 1:
                raise
            time.sleep(min(4.0, 0.25 * 2 ** attempt) * random.uniform(0.6, 1.0))
    raise AssertionError("unreachable")


def error(status, message, **extra):
    """A JSON error body: {"error": {"message": ..., ...}}."""
    return jsonify({"error": {"message": message, **extra}}), status


def order_json(row):
    return {key: row[key] for key in row.keys()}


@app.get("/health")
def health():
    return {"ok": True}


@app.post("/orders")
def create_order():
    body = request.get_json(silent=True) or {}
    amount, email = body.get("amount"), body.get("email")
    if not isinstance(amount, int) or isinstance(amount, bool) or amount < 50:
        return error(400, "amount must be an integer of at least 50 (smallest currency unit)")
    if not email or "@" not in email:
        return error(400, "a valid email is required")
    order_id = db.new_order_id()
    with db.connect() as conn:
        conn.execute("INSERT INTO orders (id, email, amount, currency) VALUES (?, ?, ?, ?)",
                     (order_id, email, amount, body.get("currency", "usd")))
        row = conn.execute("SELECT * FROM orders WHERE id = ?", (order_id,)).fetchone()
    return jsonify(order_json(row)), 201


@app.get("/orders/<order_id>")
def get_order(order_id):
    with db.connect() as conn:
        row = conn.execute("SELECT * FROM orders WHERE id = ?", (order_id,)).fetchone()
    if row is None:
        return error(404, f"no order {order_id}")
    return jsonify(order_json(row))


@app.post("/orders/<order_id>/pay")
def pay_order(order_id):
    body = request.get_json(silent=True) or {}
    payment_method = body.get("payment_method")
    if not payment_method:
        return error(400, "payment_method is required")
    with db.connect() as conn:
        order = conn.execute("SELECT * FROM orders WHERE id = ?", (order_id,)).fetchone()
    if order is None:
        return error(404, f"no order {order_id}")
    if order["status"] == "paid":  # a client retry after success: nothing more to charge
        return jsonify(order_json(order))
    # Same order and attempt -> same key: client retries, even concurrent ones, can never charge twice.
    key = f"order-{order_id}-attempt-{order['pay_attempts']}"
    params = {
        "amount": order["amount"], "currency": order["currency"], "payment_method": payment_method,
        "confirm": True, "payment_method_types": ["card"], "metadata": {"order_id": order_id},
        "description": f"Order {order_id}",
    }
    try:
        intent = create_payment_intent(params, key)
    except stripe.CardError as exc:
        with db.connect() as conn:  # the next try (say, another card) is a new payment with a new key
            conn.execute("UPDATE orders SET pay_attempts = pay_attempts + 1 WHERE id = ? AND pay_attempts = ?",
                         (order_id, order["pay_attempts"]))
        return error(402, exc.user_message or str(exc), type="card_error", code=exc.code,
                     decline_code=getattr(exc.error, "decline_code", None))
    except stripe.StripeError as exc:
        if retryable(exc):
            return error(503, "Stripe is unavailable right now; nothing was charged twice, try again shortly",
                         type="api_error")
        return error(502, f"Stripe refused the payment: {exc.user_message or exc}", type="api_error")
    if intent.status != "succeeded":
        return error(402, f"the payment was not completed (status {intent.status})", type="card_error",
                     code="payment_incomplete")
    with db.connect() as conn:
        conn.execute("UPDATE orders SET status = 'paid', payment_intent = ? WHERE id = ?", (intent.id, order_id))
        row = conn.execute("SELECT * FROM orders WHERE id = ?", (order_id,)).fetchone()
    return jsonify(order_json(row))


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
    reload_on_edit()  # edits to the app take effect without restarting the service by hand
    app.run(host="127.0.0.1", port=settings.APP_PORT, threaded=True)
