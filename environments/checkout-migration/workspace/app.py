"""Harbor Tea Co. — a small Flask + SQLite storefront.

Pages: the catalogue (/), the cart (/cart) and the checkout (/checkout).
Payments: the checkout page collects the customer's email and shipping address,
applies a promotion code, creates a PaymentIntent on the server and confirms it
in the browser with the Card Element (stripe.js).

Configuration comes from the environment only:
  APP_PORT                port to listen on (default 5000)
  STRIPE_SECRET_KEY       sk_test_… key for server calls
  STRIPE_PUBLISHABLE_KEY  pk_test_… key for stripe.js
  STRIPE_API_BASE         Stripe API base URL (empty means api.stripe.com)
  STRIPE_JS_URL           where the page loads stripe.js from (default https://js.stripe.com/v3)
  STRIPE_API_VERSION      optional API version pin
"""

from __future__ import annotations

import os
import secrets
import sqlite3
from pathlib import Path

import stripe
from flask import Flask, abort, g, jsonify, redirect, render_template, request, url_for

HERE = Path(__file__).resolve().parent
DB_PATH = Path(os.environ.get("SHOP_DB", HERE / "shop.db"))
CART_COOKIE = "harbor_cart"

stripe.api_key = os.environ.get("STRIPE_SECRET_KEY", "")
if os.environ.get("STRIPE_API_BASE"):
    stripe.api_base = os.environ["STRIPE_API_BASE"]
if os.environ.get("STRIPE_API_VERSION"):
    stripe.api_version = os.environ["STRIPE_API_VERSION"]

app = Flask(__name__)
app.config["TEMPLATES_AUTO_RELOAD"] = True


# ---------------------------------------------------------------- database

def db() -> sqlite3.Connection:
    if "db" not in g:
        conn = sqlite3.connect(DB_PATH)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA foreign_keys = ON")
        g.db = conn
    return g.db


@app.teardown_appcontext
def close_db(_exc: BaseException | None) -> None:
    conn = g.pop("db", None)
    if conn is not None:
        conn.close()


def init_db() -> None:
    with sqlite3.connect(DB_PATH) as conn:
        conn.executescript((HERE / "schema.sql").read_text())


def products() -> list[sqlite3.Row]:
    return db().execute("SELECT * FROM products ORDER BY position, name").fetchall()


def product_json(row: sqlite3.Row) -> dict:
    return {
        "id": row["id"],
        "name": row["name"],
        "description": row["description"],
        "unit_amount": row["unit_amount"],
        "currency": row["currency"],
        "price": row["stripe_price"],
    }


# ---------------------------------------------------------------- cart

def cart_id() -> str:
    return request.cookies.get(CART_COOKIE) or ""


def cart_lines(cid: str) -> list[dict]:
    rows = db().execute(
        "SELECT p.*, c.quantity FROM cart_items c JOIN products p ON p.id = c.product_id"
        " WHERE c.cart_id = ? ORDER BY p.position, p.name",
        (cid,),
    ).fetchall()
    return [{**product_json(r), "quantity": r["quantity"], "line_total": r["unit_amount"] * r["quantity"]} for r in rows]


def with_cart_cookie(response, cid: str):
    response.set_cookie(CART_COOKIE, cid, max_age=30 * 24 * 3600, httponly=True, samesite="Lax")
    return response


@app.template_filter("money")
def money(cents: int, currency: str = "usd") -> str:
    symbol = {"usd": "$", "eur": "€", "gbp": "£"}.get(currency, "")
    return f"{symbol}{cents / 100:,.2f}"


# ---------------------------------------------------------------- pages

@app.get("/health")
def health():
    return {"ok": True}


@app.get("/")
def catalogue():
    cid = cart_id()
    count = sum(line["quantity"] for line in cart_lines(cid)) if cid else 0
    return render_template("index.html", products=products(), cart_count=count)


@app.get("/api/products")
def api_products():
    return jsonify({"data": [product_json(p) for p in products()]})


@app.post("/cart/add")
def cart_add():
    product_id = request.form.get("product_id", "")
    quantity = max(1, min(99, request.form.get("quantity", 1, type=int) or 1))
    if db().execute("SELECT 1 FROM products WHERE id = ?", (product_id,)).fetchone() is None:
        abort(404)
    cid = cart_id() or secrets.token_hex(12)
    db().execute(
        "INSERT INTO cart_items (cart_id, product_id, quantity) VALUES (?, ?, ?)"
        " ON CONFLICT (cart_id, product_id) DO UPDATE SET quantity = MIN(99, quantity + excluded.quantity)",
        (cid, product_id, quantity),
    )
    db().commit()
    return with_cart_cookie(redirect(request.form.get("next") or url_for("cart")), cid)


@app.post("/cart/update")
def cart_update():
    cid = cart_id()
    product_id = request.form.get("product_id", "")
    quantity = request.form.get("quantity", 0, type=int) or 0
    if quantity <= 0:
        db().execute("DELETE FROM cart_items WHERE cart_id = ? AND product_id = ?", (cid, product_id))
    else:
        db().execute(
            "UPDATE cart_items SET quantity = ? WHERE cart_id = ? AND product_id = ?",
            (min(99, quantity), cid, product_id),
        )
    db().commit()
    return redirect(url_for("cart"))


@app.get("/cart")
def cart():
    lines = cart_lines(cart_id())
    subtotal = sum(line["line_total"] for line in lines)
    return render_template("cart.html", lines=lines, subtotal=subtotal)


@app.get("/checkout")
def checkout():
    lines = cart_lines(cart_id())
    if not lines:
        return redirect(url_for("cart"))
    return render_template(
        "checkout.html",
        lines=lines,
        subtotal=sum(line["line_total"] for line in lines),
        publishable_key=os.environ.get("STRIPE_PUBLISHABLE_KEY", ""),
        stripe_js_url=os.environ.get("STRIPE_JS_URL") or "https://js.stripe.com/v3",
    )


# ---------------------------------------------------------------- payments (Card Element)

def find_promotion(code: str):
    """The active promotion code object for `code` and its coupon, or (None, None)."""
    if not code:
        return None, None
    found = stripe.PromotionCode.list(code=code, active=True, limit=1)
    if not found.data:
        return None, None
    promo = found.data[0].to_dict()
    # API versions from 2025-09-30 name the coupon under `promotion`; older ones embed it as `coupon`.
    promotion = promo.get("promotion")
    coupon_id = promotion["coupon"] if promotion else promo["coupon"]["id"]
    return promo, stripe.Coupon.retrieve(coupon_id).to_dict()


def discount_for(coupon, subtotal: int) -> int:
    if coupon is None or not coupon.get("valid", True):
        return 0
    if coupon.get("percent_off"):
        return round(subtotal * coupon["percent_off"] / 100)
    return min(subtotal, coupon.get("amount_off") or 0)


@app.post("/api/promotion")
def check_promotion():
    """Preview a promotion code for the current cart."""
    code = (request.get_json(silent=True) or {}).get("code", "").strip()
    subtotal = sum(line["line_total"] for line in cart_lines(cart_id()))
    promo, coupon = find_promotion(code)
    if promo is None:
        return jsonify({"error": f"{code or 'That code'} is not a valid promotion code."}), 400
    discount = discount_for(coupon, subtotal)
    return jsonify({"code": promo["code"], "discount": discount, "total": subtotal - discount})


@app.post("/api/payment-intent")
def create_payment_intent():
    """Create a PaymentIntent for the cart (less any promotion code) with the customer's email and address."""
    body = request.get_json(silent=True) or {}
    cid = cart_id()
    lines = cart_lines(cid)
    if not lines:
        return jsonify({"error": "Your cart is empty."}), 400
    email = (body.get("email") or "").strip()
    shipping = body.get("shipping") or {}
    if not email or not shipping.get("name") or not shipping.get("line1"):
        return jsonify({"error": "Please give your email, name and shipping address."}), 400
    subtotal = sum(line["line_total"] for line in lines)
    promo, coupon = find_promotion((body.get("promotion_code") or "").strip())
    amount = subtotal - discount_for(coupon, subtotal)
    currency = lines[0]["currency"]
    try:
        intent = stripe.PaymentIntent.create(
            amount=amount,
            currency=currency,
            payment_method_types=["card"],
            receipt_email=email,
            shipping={
                "name": shipping["name"],
                "address": {
                    "line1": shipping["line1"],
                    "city": shipping.get("city", ""),
                    "postal_code": shipping.get("postal_code", ""),
                    "country": shipping.get("country", "US"),
                },
            },
            metadata={
                "cart_id": cid,
                "items": ",".join(f"{line['id']}x{line['quantity']}" for line in lines),
                "promotion_code": promo["code"] if promo else "",
            },
        )
    except stripe.StripeError as exc:
        return jsonify({"error": exc.user_message or str(exc)}), 502
    db().execute(
        "INSERT INTO orders (cart_id, stripe_ref, amount_total, currency, email, status) VALUES (?, ?, ?, ?, ?, 'pending')",
        (cid, intent.id, amount, currency, email),
    )
    db().commit()
    return jsonify({"clientSecret": intent.client_secret})


@app.get("/order/complete")
def order_complete():
    """Where the browser lands after confirmCardPayment succeeds."""
    intent_id = request.args.get("payment_intent", "")
    if not intent_id.startswith("pi_"):
        abort(400)
    intent = stripe.PaymentIntent.retrieve(intent_id)
    paid = intent.status == "succeeded"
    order = db().execute("SELECT * FROM orders WHERE stripe_ref = ?", (intent_id,)).fetchone()
    if paid and order is not None and order["status"] != "paid":
        db().execute("UPDATE orders SET status = 'paid' WHERE id = ?", (order["id"],))
        db().execute("DELETE FROM cart_items WHERE cart_id = ?", (order["cart_id"],))
        db().commit()
    return render_template("complete.html", paid=paid, reference=intent_id,
                           amount=intent.amount, currency=intent.currency)


def main() -> None:
    init_db()
    app.run(host="127.0.0.1", port=int(os.environ.get("APP_PORT", "5000")), debug=False)


if __name__ == "__main__":
    main()
