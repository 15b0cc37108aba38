"""Studio bookings API (Flask + SQLite): purchases are Stripe Invoices paid at once with the given card."""

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
    prices = stripe.Price.list(lookup_keys=[item["sku"]], active=True, limit=1).data
    if not prices:
        return error(503, f"the catalogue has no Stripe price for {item['sku']}; run migrate.py first")
    invoice = None
    try:
        customer = customer_for(email)
        invoice = stripe.Invoice.create(customer=customer.id, currency=item["currency"], auto_advance=False,
                                        pending_invoice_items_behavior="exclude",
                                        metadata={"booking_id": booking_id, "sku": item["sku"]})
        stripe.InvoiceItem.create(customer=customer.id, invoice=invoice.id, pricing={"price": prices[0].id},
                                  quantity=quantity, metadata={"booking_id": booking_id})
        invoice = stripe.Invoice.finalize_invoice(invoice.id)
        if invoice.status == "open":
            card = stripe.PaymentMethod.attach(body["payment_method"], customer=customer.id)
            invoice = stripe.Invoice.pay(invoice.id, payment_method=card.id)
    except stripe.CardError as exc:
        # A decline: nothing is booked, and nothing is left to collect later.
        release(invoice)
        err = exc.error
        return error(402, exc.user_message or str(exc), type="card_error", code=exc.code,
                     decline_code=getattr(err, "decline_code", None))
    except stripe.StripeError as exc:
        release(invoice)
        return error(502, f"Stripe refused the purchase: {exc.user_message or exc}", type="api_error")
    if invoice.status != "paid":
        release(invoice)
        return error(402, f"the invoice was not paid (status {invoice.status})", type="card_error",
                     code="payment_incomplete")
    row = {"id": booking_id, "source": "web", "sku": item["sku"], "email": email, "quantity": quantity,
           "amount": invoice.amount_paid, "currency": invoice.currency, "status": "paid", "customer": customer.id,
           "invoice": invoice.id}
    with db.connect() as conn:
        conn.execute(f"INSERT INTO bookings ({', '.join(row)}) VALUES ({', '.join('?' for _ in row)})",
                     list(row.values()))
        saved = conn.execute("SELECT * FROM bookings WHERE id = ?", (booking_id,)).fetchone()
    return jsonify(booking_json(saved)), 201


def customer_for(email):
    """The one Customer of this email (made the first time)."""
    found = stripe.Customer.list(email=email, limit=1).data
    return found[0] if found else stripe.Customer.create(email=email)


def release(invoice):
    """An unpaid purchase's invoice: a draft is deleted, an open one voided."""
    if invoice is None:
        return
    current = stripe.Invoice.retrieve(invoice.id)
    if current.status == "draft":
        stripe.Invoice.delete(current.id)
    elif current.status in ("open", "uncollectible"):
        stripe.Invoice.void_invoice(current.id)


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
