"""Pedal & Co.'s Checkout gym: challenge pages to reproduce, and an endpoint that tries an answer."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import stripe
from flask import Flask, abort, jsonify, redirect, request

ROOT = Path(__file__).resolve().parent
DATABASE = ROOT / "gym.db"

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


def app_url() -> str:
    return request.host_url.rstrip("/")


@app.get("/health")
def health():
    return "ok"


@app.get("/")
def index():
    with db() as conn:
        rows = conn.execute("SELECT number, title FROM challenges ORDER BY number").fetchall()
    items = "".join(f'<li><a href="/challenges/{r["number"]}">Challenge {r["number"]}: {r["title"]}</a></li>'
                    for r in rows)
    return f"<!doctype html><title>Pedal &amp; Co. Checkout gym</title><h1>Checkout gym</h1><ol>{items}</ol>"


@app.get("/api/catalogue")
def catalogue():
    with db() as conn:
        rows = conn.execute("SELECT slug, name, price_id, unit_amount, currency, recurring FROM catalogue").fetchall()
    return jsonify({"data": [dict(r) for r in rows]})


@app.get("/api/challenges")
def challenges():
    with db() as conn:
        rows = conn.execute("SELECT number, title, page_url FROM challenges ORDER BY number").fetchall()
    return jsonify({"data": [dict(r) for r in rows]})


@app.get("/challenges/<int:number>")
def challenge(number: int):
    """The challenge's Checkout page."""
    with db() as conn:
        row = conn.execute("SELECT page_url FROM challenges WHERE number = ?", (number,)).fetchone()
    if row is None:
        abort(404)
    return redirect(row["page_url"])


@app.get("/challenges/<int:number>/done")
def done(number: int):
    return f"Challenge {number}: checkout finished."


@app.post("/challenges/<int:number>/attempt")
def attempt(number: int):
    """Create a Checkout Session from the JSON body (the create parameters) and record it as this challenge's answer."""
    with db() as conn:
        if conn.execute("SELECT 1 FROM challenges WHERE number = ?", (number,)).fetchone() is None:
            return jsonify({"error": {"message": f"no challenge {number}"}}), 404
    params = request.get_json(silent=True)
    if not isinstance(params, dict):
        return jsonify({"error": {"message": "send the Checkout Session's create parameters as a JSON object"}}), 400
    params = dict(params)
    if params.get("ui_mode") in (None, "hosted", "hosted_page"):
        params.setdefault("success_url", f"{app_url()}/challenges/{number}/done")
    params["metadata"] = {**(params.get("metadata") or {}), "gym_challenge": str(number)}
    try:
        session = stripe_client().v1.checkout.sessions.create(params)
    except stripe.StripeError as exc:
        error = exc.error.to_dict() if exc.error else {"message": str(exc)}
        return jsonify({"error": error}), exc.http_status or 500
    with db() as conn:
        conn.execute("INSERT INTO attempts (challenge, session_id) VALUES (?, ?)", (number, session.id))
    return jsonify({"challenge": number, "session": session.id, "url": session.url})


if __name__ == "__main__":
    app.run(host="127.0.0.1", port=int(os.environ.get("APP_PORT", "5000")), debug=False)
