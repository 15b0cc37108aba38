"""Orders API of a small online shop (Flask + SQLite). The payment endpoint is still to be written: see PROBLEM.md."""

import os
import sys

from flask import Flask, jsonify, request

import db
import settings

app = Flask(__name__)


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
    # TODO: charge the order with Stripe, safely (see PROBLEM.md).
    return error(501, "payments are not implemented yet")


def own_files_only():
    """Reloader exclusions: everything on sys.path except this app's directory (only our edits reload)."""
    here = os.path.dirname(os.path.abspath(__file__))
    return [os.path.join(os.path.abspath(p), "*") for p in sys.path
            if p and os.path.isdir(p) and not here.startswith(os.path.abspath(p))]


if __name__ == "__main__":
    db.connect().close()
    # The reloader picks up edits without restarting the service by hand.
    app.run(host="127.0.0.1", port=settings.APP_PORT, threaded=True, use_reloader=True,
            exclude_patterns=own_files_only())
