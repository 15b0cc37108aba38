"""Sprocket Cloud's plans app (Flask + SQLite): accounts sign up for a plan, billed with Stripe subscriptions."""

import ast
import calendar
import os
import secrets
import sys
import threading
import time
from datetime import datetime, timezone

import stripe
from flask import Flask, jsonify, request
from markupsafe import escape

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


def price(lookup_key):
    """The id of the active Stripe price with this lookup key (the catalogue is in README.md)."""
    found = stripe.Price.list(lookup_keys=[lookup_key], active=True).data
    if not found:
        raise LookupError(f"no active price with lookup key {lookup_key}")
    return found[0].id


def months_from(moment, months):
    """``moment`` plus whole calendar months, the day clamped to the month's length (as Stripe's periods are)."""
    when = datetime.fromtimestamp(moment, timezone.utc)
    year, month = divmod(when.month - 1 + months, 12)
    year, month = when.year + year, month + 1
    day = min(when.day, calendar.monthrange(year, month)[1])
    return int(when.replace(year=year, month=month, day=day).timestamp())


def now_for(customer):
    """The customer's current time: its test clock's frozen time when it is on one, else now."""
    clock = stripe.Customer.retrieve(customer).test_clock
    if clock:
        return stripe.test_helpers.TestClock.retrieve(clock).frozen_time
    return int(time.time())


def subscription_params(plan, customer):
    """The Stripe Billing parameters of each plan (the business models are in the plans table)."""
    starter = [{"price": price("gym_starter_monthly")}]
    if plan == "trial_14":
        return {"items": starter, "trial_period_days": 14}
    if plan == "anchor_first":
        # Renew on the 1st; create_prorations bills the partial first period at once.
        return {"items": starter, "billing_cycle_anchor_config": {"day_of_month": 1},
                "proration_behavior": "create_prorations"}
    if plan == "coupon_3_months":
        return {"items": [{"price": price("gym_pro_monthly")}], "discounts": [{"coupon": "GYM25X3"}]}
    if plan == "annual":
        return {"items": [{"price": price("gym_pro_annual")}]}
    if plan == "usage":
        return {"items": [{"price": price("gym_api_calls")}]}  # metered: no quantity
    if plan == "seats":
        return {"items": [{"price": price("gym_pro_monthly"), "quantity": 5}]}
    if plan == "setup_fee":
        return {"items": starter, "add_invoice_items": [{"price": price("gym_setup_fee")}]}
    if plan == "upgrade":
        return {"items": starter}
    if plan == "fixed_term":
        return {"items": starter, "cancel_at": months_from(now_for(customer), 3)}
    raise LookupError(f"plan {plan} has no Stripe configuration")


def stripe_error(exc):
    """Stripe's refusal as this app's error answer (never a success)."""
    err = exc.error
    status = exc.http_status if exc.http_status and 400 <= exc.http_status < 500 else 502
    return error(status, exc.user_message or str(exc), type=getattr(err, "type", None),
                 code=getattr(err, "code", None))


def account_json(conn, row):
    subs = conn.execute("SELECT plan, stripe_subscription, status, created_at, updated_at FROM subscriptions "
                        "WHERE account_id = ? ORDER BY id", (row["id"],)).fetchall()
    return {**dict(row), "subscriptions": [dict(s) for s in subs]}


@app.get("/health")
def health():
    return {"ok": True}


@app.get("/")
def accounts_page():
    """Support's page: every account and its subscriptions, as this app's database has them."""
    with db.connect() as conn:
        rows = conn.execute(
            "SELECT a.id, a.company, a.email, s.plan, s.stripe_subscription, s.status FROM accounts a "
            "LEFT JOIN subscriptions s ON s.account_id = a.id ORDER BY a.created_at, a.id, s.id").fetchall()
    cells = "".join(
        "<tr>" + "".join(f"<td>{escape(r[k] if r[k] is not None else '—')}</td>"
                         for k in ("id", "company", "email", "plan", "stripe_subscription", "status")) + "</tr>"
        for r in rows)
    return ("<!doctype html><title>Sprocket Cloud accounts</title><h1>Accounts</h1>"
            "<table><tr><th>account</th><th>company</th><th>email</th><th>plan</th><th>subscription</th>"
            f"<th>status</th></tr>{cells}</table><p><a href=\"/plans\">plans</a></p>")


@app.get("/plans")
def plans():
    with db.connect() as conn:
        rows = conn.execute("SELECT id, name, description FROM plans ORDER BY position").fetchall()
    return jsonify([dict(r) for r in rows])


@app.get("/accounts")
def accounts():
    with db.connect() as conn:
        rows = conn.execute("SELECT * FROM accounts ORDER BY created_at, id").fetchall()
        return jsonify([account_json(conn, r) for r in rows])


@app.get("/accounts/<account_id>")
def get_account(account_id):
    with db.connect() as conn:
        row = conn.execute("SELECT * FROM accounts WHERE id = ?", (account_id,)).fetchone()
        if row is None:
            return error(404, f"no account {account_id}")
        return jsonify(account_json(conn, row))


@app.post("/accounts")
def create_account():
    """Onboarding registers a company here once it has made its Stripe customer (with the company's card)."""
    body = request.get_json(silent=True) or {}
    company, email, customer = body.get("company"), body.get("email"), body.get("stripe_customer")
    if not company or not email or "@" not in email:
        return error(400, "company and a valid email are required")
    if not isinstance(customer, str) or not customer.startswith("cus_"):
        return error(400, "stripe_customer must be a Stripe customer id (cus_...)")
    account_id = "ac_" + secrets.token_hex(6)
    with db.connect() as conn:
        conn.execute("INSERT INTO accounts (id, company, email, stripe_customer) VALUES (?, ?, ?, ?)",
                     (account_id, company, email, customer))
        row = conn.execute("SELECT * FROM accounts WHERE id = ?", (account_id,)).fetchone()
        return jsonify(account_json(conn, row)), 201


@app.post("/signup")
def signup():
    body = request.get_json(silent=True) or {}
    with db.connect() as conn:
        account = conn.execute("SELECT * FROM accounts WHERE id = ?", (body.get("account"),)).fetchone()
        plan = conn.execute("SELECT * FROM plans WHERE id = ?", (body.get("plan"),)).fetchone()
    if account is None:
        return error(404, "unknown account")
    if plan is None:
        return error(400, "unknown plan")
    try:
        sub = stripe.Subscription.create(customer=account["stripe_customer"],
                                         metadata={"account": account["id"], "plan": plan["id"]},
                                         **subscription_params(plan["id"], account["stripe_customer"]))
    except stripe.StripeError as exc:
        return stripe_error(exc)
    with db.connect() as conn:
        conn.execute("INSERT INTO subscriptions (account_id, plan, stripe_subscription, status) VALUES (?, ?, ?, ?)",
                     (account["id"], plan["id"], sub.id, sub.status))
    return jsonify({"account": account["id"], "plan": plan["id"], "subscription": sub.id, "status": sub.status}), 201


@app.post("/accounts/<account_id>/upgrade")
def upgrade(account_id):
    with db.connect() as conn:
        row = conn.execute("SELECT * FROM subscriptions WHERE account_id = ? AND plan = 'upgrade' "
                           "ORDER BY id DESC LIMIT 1", (account_id,)).fetchone()
    if row is None or not row["stripe_subscription"]:
        return error(404, f"account {account_id} has no upgradable Starter subscription")
    try:
        sub = stripe.Subscription.retrieve(row["stripe_subscription"])
        item = sub["items"].data[0]
        # The prorated difference is invoiced (and charged) now, not at the next renewal.
        sub = stripe.Subscription.modify(sub.id, items=[{"id": item.id, "price": price("gym_pro_monthly")}],
                                         proration_behavior="always_invoice")
    except stripe.StripeError as exc:
        return stripe_error(exc)
    with db.connect() as conn:
        conn.execute("UPDATE subscriptions SET status = ?, updated_at = CURRENT_TIMESTAMP WHERE id = ?",
                     (sub.status, row["id"]))
    return jsonify({"account": account_id, "plan": "upgrade", "subscription": sub.id, "status": sub.status})


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
