"""Trailhead Outfitters' checkout: contact & shipping, then payment, each checked by the server."""

from __future__ import annotations

import os
import re
import sqlite3
from pathlib import Path

import stripe
from flask import Flask, jsonify, render_template, request

ROOT = Path(__file__).resolve().parent
DATABASE = ROOT / "shop.db"
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")
TEST_CARDS = {"4242424242424242": "pm_card_visa"}  # the test card numbers the shop's processor accepts

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


def cart() -> tuple[list[sqlite3.Row], int]:
    with db() as conn:
        rows = conn.execute("SELECT sku, name, unit_amount, quantity FROM cart ORDER BY sku").fetchall()
    return rows, sum(r["unit_amount"] * r["quantity"] for r in rows)


def problem(message: str, field: str):
    return jsonify({"error": {"message": message, "field": field}}), 400


@app.get("/health")
def health():
    return "ok"


@app.get("/checkout")
def checkout():
    rows, subtotal = cart()
    return render_template("checkout.html", items=rows, subtotal=subtotal)


@app.post("/api/details")
def details():
    """Contact & shipping: checked, then kept as a Stripe Customer."""
    body = request.get_json(silent=True) or {}
    value = {k: str(body.get(k) or "").strip() for k in ("email", "name", "line1", "city", "postal_code", "country")}
    if not EMAIL.match(value["email"]):
        return problem("Enter a valid email address.", "email")
    if not value["name"]:
        return problem("Enter your full name.", "name")
    if not value["line1"]:
        return problem("Enter the street address.", "line1")
    if not value["city"]:
        return problem("Enter the city.", "city")
    if not re.fullmatch(r"\d{5}", value["postal_code"]):
        return problem("Enter a 5-digit ZIP code.", "postal_code")
    address = {"line1": value["line1"], "city": value["city"], "postal_code": value["postal_code"],
               "country": value["country"] or "US"}
    customer = stripe_client().v1.customers.create({
        "email": value["email"], "name": value["name"], "address": address,
        "shipping": {"name": value["name"], "address": address}})
    with db() as conn:
        conn.execute("INSERT INTO customers (stripe_customer) VALUES (?)", (customer.id,))
    return jsonify({"customer": customer.id})


@app.post("/api/pay")
def pay():
    """Payment: the card, the name on it and an optional promotion code; a PaymentIntent confirmed at once."""
    body = request.get_json(silent=True) or {}
    customer = str(body.get("customer") or "")
    number = re.sub(r"\D", "", str(body.get("card_number") or ""))
    holder = str(body.get("cardholder") or "").strip()
    code = str(body.get("promotion_code") or "").strip().upper()
    with db() as conn:
        known = conn.execute("SELECT 1 FROM customers WHERE stripe_customer = ?", (customer,)).fetchone()
        percent = conn.execute("SELECT percent_off FROM promotion_codes WHERE code = ?", (code,)).fetchone()
    if not known:
        return problem("Fill in contact & shipping first.", "email")
    if number not in TEST_CARDS:
        return problem("Your card number is incorrect.", "card_number")
    if not holder:
        return problem("Enter the name on the card.", "cardholder")
    if code and percent is None:
        return problem(f"{code} is not a valid promotion code.", "promotion_code")
    _rows, subtotal = cart()
    amount = subtotal - (round(subtotal * percent["percent_off"] / 100) if percent else 0)
    try:
        intent = stripe_client().v1.payment_intents.create({
            "amount": amount, "currency": "usd", "customer": customer, "payment_method": TEST_CARDS[number],
            "payment_method_types": ["card"], "confirm": True, "metadata": {"cardholder": holder}})
    except stripe.CardError as exc:
        return problem(exc.user_message or "Your card was declined.", "card_number")
    status = "paid" if intent.status == "succeeded" else intent.status
    with db() as conn:
        cur = conn.execute("INSERT INTO orders (stripe_customer, payment_intent, amount, promotion_code, status)"
                           " VALUES (?, ?, ?, ?, ?)", (customer, intent.id, amount, code or None, status))
    return jsonify({"order": cur.lastrowid, "status": status, "amount": amount})


if __name__ == "__main__":
    app.run(host="127.0.0.1", port=int(os.environ.get("APP_PORT", "5000")), debug=False)
