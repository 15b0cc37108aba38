"""Studio bookings API (Flask + SQLite). Purchases are not wired up to Stripe yet: see the TODO."""

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


def error(status, message, **extra):
    """A JSON error body: {"error": {"message": ..., ...}}."""
    return jsonify({"error": {"message": message, **extra}}), status


def booking_json(row):
    return {key: row[key] for key in row.keys()}


@app.get("/health")
def health():
    return {"ok": True}


@app.get("/catalogue")
def catalogue():
    with db.connect() as conn:
        rows = conn.execute("SELECT * FROM catalogue ORDER BY sku").fetchall()
    return jsonify([dict(r) for r in rows])


@app.get("/bookings/<booking_id>")
def get_booking(booking_id):
    with db.connect() as conn:
        row = conn.execute("SELECT * FROM bookings WHERE id = ?", (booking_id,)).fetchone()
    if row is None:
        return error(404, f"no booking {booking_id}")
    return jsonify(booking_json(row))


@app.post("/purchases")
def purchase():
    body = request.get_json(silent=True) or {}
    with db.connect() as conn:
        item = conn.execute("SELECT * FROM catalogue WHERE sku = ?", (body.get("sku"),)).fetchone()
    if item is None:
        return error(400, "unknown sku")
    email = body.get("email")
    if not email or "@" not in email:
        return error(400, "a valid email is required")
    quantity = body.get("quantity", 1)
    if not isinstance(quantity, int) or isinstance(quantity, bool) or not 1 <= quantity <= 10:
        return error(400, "quantity must be an integer from 1 to 10")
    if not body.get("payment_method"):
        return error(400, "payment_method is required")
    booking_id = "bk_" + secrets.token_hex(8)
    # TODO: bill the purchase with a Stripe Invoice paid by the payment method (see PROBLEM.md), then store it.
    return error(501, "purchases are not implemented yet")


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
