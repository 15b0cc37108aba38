"""Ridgeline Coworking's member billing: the member's yearly desk invoice and how she pays it."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import stripe
from flask import Flask, redirect, render_template

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


if __name__ == "__main__":
    app.run(host="127.0.0.1", port=int(os.environ.get("APP_PORT", "5000")), debug=False)
