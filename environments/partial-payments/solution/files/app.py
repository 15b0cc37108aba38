"""Ridgeline Coworking's member billing: the member's yearly desk invoice and how she pays it."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import stripe
from flask import Flask, redirect, render_template, request, url_for

ROOT = Path(__file__).resolve().parent
DATABASE = ROOT / "desk.db"

app = Flask(__name__)


def stripe_client() -> stripe.StripeClient:
    base = os.environ.get("STRIPE_API_BASE")
    kwargs = {"base_addresses": {"api": base}} if base else {}
    if os.environ.get("STRIPE_API_VERSION"):
        kwargs["stripe_version"] = os.environ["STRIPE_API_VERSION"]
    return stripe.StripeClient(os.environ["STRIPE_SECRET_KEY"], **kwargs)


def db() -> sqlite3.Connection:
    conn = sqlite3.connect(DATABASE, timeout=10)
    conn.row_factory = sqlite3.Row
    return conn


def member() -> sqlite3.Row:
    with db() as conn:
        return conn.execute("SELECT * FROM members ORDER BY id LIMIT 1").fetchone()


def payments(member_id: int) -> list[sqlite3.Row]:
    with db() as conn:
        return conn.execute("SELECT * FROM payments WHERE member_id = ? ORDER BY id", (member_id,)).fetchall()


@app.template_filter("dollars")
def dollars(cents: int) -> str:
    return f"${cents / 100:,.2f}"


@app.get("/health")
def health():
    return "ok"


@app.get("/")
def invoice_page():
    """The member's open yearly invoice, what she has paid so far, and how to pay."""
    who = member()
    invoice = stripe_client().v1.invoices.retrieve(who["stripe_invoice"])
    return render_template("invoice.html", member=who, invoice=invoice, payments=payments(who["id"]))


@app.post("/pay")
def pay_in_full():
    """Send the member to the invoice's Stripe-hosted page to pay all of it."""
    invoice = stripe_client().v1.invoices.retrieve(member()["stripe_invoice"])
    return redirect(invoice.hosted_invoice_url, code=303)


def next_half(invoice) -> int:
    """The first half is half the total rounded down to the cent; the second is whatever remains."""
    return invoice.amount_due // 2 if invoice.amount_paid == 0 else invoice.amount_remaining


@app.post("/pay-half")
def pay_half():
    """A Checkout Session (one-time payment) for the next half of the invoice; the member pays it on Stripe's page."""
    who = member()
    client = stripe_client()
    invoice = client.v1.invoices.retrieve(who["stripe_invoice"])
    if invoice.status != "open":
        return render_template("paid.html", error=f"Invoice {invoice.number} is {invoice.status}: nothing to pay.",
                               invoice=invoice), 400
    amount = next_half(invoice)
    part = "1 of 2" if invoice.amount_paid == 0 else "2 of 2"
    session = client.v1.checkout.sessions.create({
        "mode": "payment",
        "customer": who["stripe_customer"],
        "line_items": [{"quantity": 1, "price_data": {
            "currency": invoice.currency, "unit_amount": amount,
            "product_data": {"name": f"Invoice {invoice.number}, half {part}"}}}],
        "metadata": {"invoice": invoice.id, "part": part},
        "payment_intent_data": {"metadata": {"invoice": invoice.id, "part": part}},
        "success_url": url_for("paid", _external=True) + "?session_id={CHECKOUT_SESSION_ID}",
        "cancel_url": url_for("invoice_page", _external=True),
    })
    return redirect(session.url, code=303)


@app.get("/paid")
def paid():
    """Checkout's return: attach the session's PaymentIntent to the invoice, then record the half."""
    if not request.args.get("session_id", "").startswith("cs_"):
        return render_template("paid.html", error="No Checkout Session given.", invoice=None), 400
    who = member()
    client = stripe_client()
    session = client.v1.checkout.sessions.retrieve(request.args["session_id"])
    if session.payment_status != "paid":
        return render_template("paid.html", error="This Checkout Session is not paid.", invoice=None), 400
    with db() as conn:
        known = conn.execute("SELECT 1 FROM payments WHERE payment_intent = ?", (session.payment_intent,)).fetchone()
    if known:  # a reload of the return page: already attached and recorded
        invoice = client.v1.invoices.retrieve(who["stripe_invoice"])
        return render_template("paid.html", error=None, invoice=invoice, amount=session.amount_total)
    try:
        invoice = client.v1.invoices.attach_payment(who["stripe_invoice"],
                                                    {"payment_intent": session.payment_intent})
    except stripe.StripeError as exc:
        # Not attached: the invoice does not count this money. Say so; record nothing.
        return render_template("paid.html", error=f"Stripe refused the payment for the invoice: "
                               f"{exc.user_message}", invoice=None), 400
    with db() as conn:
        conn.execute(
            "INSERT INTO payments (member_id, stripe_invoice, checkout_session, payment_intent, amount,"
            " amount_remaining, status) VALUES (?, ?, ?, ?, ?, ?, 'paid')",
            (who["id"], invoice.id, session.id, session.payment_intent, session.amount_total,
             invoice.amount_remaining))
    return render_template("paid.html", error=None, invoice=invoice, amount=session.amount_total)


if __name__ == "__main__":
    app.run(host="127.0.0.1", port=int(os.environ.get("APP_PORT", "5000")), debug=False)
