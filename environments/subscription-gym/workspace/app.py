"""Sprocket Cloud's plans app (Flask + SQLite): accounts sign up for a plan. Billing is not wired up yet: see the
TODOs."""

import ast
import os
import secrets
import sys
import threading
import time

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
    # TODO: create the Stripe subscription this plan means for the account's customer (see PROBLEM.md), record it
    # in the subscriptions table and answer 201.
    return error(501, "signup is not implemented yet")


@app.post("/accounts/<account_id>/upgrade")
def upgrade(account_id):
    # TODO: move the account's Starter subscription to Pro mid-cycle (see PROBLEM.md).
    return error(501, "upgrades are not implemented yet")


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
