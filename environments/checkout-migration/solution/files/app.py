"""Harbor Tea Co. — a small Flask + SQLite storefront.

Pages: the catalogue (/), the cart (/cart) and the checkout (/checkout).
Payments: embedded Checkout. The server creates a Checkout Session for the cart
(promotion codes allowed, shipping address collected) and /checkout mounts
Stripe's form in the page; /checkout/return records the paid order.

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


# ---------------------------------------------------------------- payments (embedded Checkout)

# Embedded Checkout's ui_mode is "embedded_page" from API version 2026-03-25 ("embedded" before).
API_VERSION = os.environ.get("STRIPE_API_VERSION") or stripe.api_version
UI_MODE = "embedded_page" if API_VERSION >= "2026-03-25" else "embedded"
SHIP_TO = ["US", "CA", "GB", "IE"]


@app.post("/api/checkout-session")
def create_checkout_session():
    """Create an embedded Checkout Session for the cart; the page mounts it with the client secret."""
    cid = cart_id()
    lines = cart_lines(cid)
    if not lines:
        return jsonify({"error": "Your cart is empty."}), 400
    try:
        session = stripe.checkout.Session.create(
            mode="payment",
            ui_mode=UI_MODE,
            line_items=[{"price": line["price"], "quantity": line["quantity"]} for line in lines],
            allow_promotion_codes=True,
            shipping_address_collection={"allowed_countries": SHIP_TO},
            client_reference_id=cid,
            metadata={"cart_id": cid},
            return_url=url_for("checkout_return", _external=True) + "?session_id={CHECKOUT_SESSION_ID}",
        )
    except stripe.StripeError as exc:
        return jsonify({"error": exc.user_message or str(exc)}), 502
    db().execute(
        "INSERT INTO orders (cart_id, stripe_ref, amount_total, currency, status) VALUES (?, ?, ?, ?, 'pending')",
        (cid, session.id, session.amount_total, session.currency),
    )
    db().commit()
    return jsonify({"clientSecret": session.client_secret, "id": session.id})


@app.get("/checkout/return")
def checkout_return():
    """Where embedded Checkout sends the customer after paying: record the order, show the session id."""
    session_id = request.args.get("session_id", "")
    if not session_id.startswith("cs_"):
        abort(400)
    session = stripe.checkout.Session.retrieve(session_id)
    paid = session.status == "complete" and session.payment_status == "paid"
    email = session.customer_details.email if session.customer_details else None
    order = db().execute("SELECT * FROM orders WHERE stripe_ref = ?", (session_id,)).fetchone()
    if paid and order is not None and order["status"] != "paid":
        db().execute("UPDATE orders SET status = 'paid', amount_total = ?, email = ? WHERE id = ?",
                     (session.amount_total, email, order["id"]))
        db().execute("DELETE FROM cart_items WHERE cart_id = ?", (order["cart_id"],))
        db().commit()
    return render_template("complete.html", paid=paid, reference=session_id,
                           amount=session.amount_total or 0, currency=session.currency or "usd")


def main() -> None:
    init_db()
    app.run(host="127.0.0.1", port=int(os.environ.get("APP_PORT", "5000")), debug=False)


if __name__ == "__main__":
    main()
