#!/usr/bin/env python3
"""Write the hand-made sample traces in replays/ (valid by construction: they go through TraceWriter).

Two episodes of the checkout-migration task (a Flask storefront moves from the Card
Element + PaymentIntent to Embedded Checkout):
  checkout-migration-pass.jsonl  the agent migrates, pays in the browser with a promotion code, submits: 1.0
  checkout-migration-400.jsonl   the app's call to Stripe gets HTTP 400, the agent calls it done: fails
They are marked ``hand_made`` in the header and will be replaced by recorded runs once the runtime lands.

Usage: python scripts/make_sample_replays.py [OUT_DIR]   (default: replays/)
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from stripebench_tui.core.events import (
    EpisodeEnd,
    GraderVerdict,
    Header,
    ModelMessage,
    Service,
    StripeObject,
    ToolCall,
    ToolResult,
)
from stripebench_tui.core.trace import TraceWriter, sidecar_dir

MODEL = "claude-sonnet-4-5"
PRICE_IN, PRICE_OUT = 3.0 / 1e6, 15.0 / 1e6  # USD per token
FAKE_KEY = "sk_test_51QbXc2HsampleOnlyNotARealKey0000"  # redacted by the writer, proving it works
CREATED = 1763647331  # 2025-11-20T14:02:11Z

CRITERIA = [
    ("catalogue_served", 1.0, "GET / still lists the three products with their prices"),
    ("ui_mode_embedded", 1.0, "a Checkout Session was created with ui_mode=embedded"),
    ("mode_payment", 1.0, "the session is a one-time payment (mode=payment)"),
    ("line_items_match", 1.0, "the session's line items match the cart (2 × Tote, 1 × Mug)"),
    ("paid", 2.0, "the submitted session is complete and paid"),
    ("promotion_discount", 1.0, "the LAUNCH20 promotion code was applied (20% off)"),
]

SERVER_BEFORE = '''import os

import stripe
from flask import Flask, jsonify, render_template, request

stripe.api_key = os.environ["STRIPE_SECRET_KEY"]
stripe.api_base = os.environ.get("STRIPE_API_BASE", "https://api.stripe.com")

app = Flask(__name__)

PRODUCTS = {
    "tote": {"name": "Canvas Tote", "price": "price_1QbXtoteEUR2500", "amount": 2500},
    "mug": {"name": "Enamel Mug", "price": "price_1QbXmugEUR1200", "amount": 1200},
    "cap": {"name": "Field Cap", "price": "price_1QbXcapEUR1800", "amount": 1800},
}


@app.get("/")
def catalogue():
    return render_template("index.html", products=PRODUCTS)


@app.get("/checkout")
def checkout():
    return render_template("checkout.html", publishable_key=os.environ["STRIPE_PUBLISHABLE_KEY"])


@app.post("/create-payment-intent")
def create_payment_intent():
    cart = request.get_json()["cart"]
    amount = sum(PRODUCTS[item["id"]]["amount"] * item["quantity"] for item in cart)
    intent = stripe.PaymentIntent.create(amount=amount, currency="eur", automatic_payment_methods={"enabled": True})
    return jsonify(clientSecret=intent.client_secret)


if __name__ == "__main__":
    app.run(port=4242)
'''

CHECKOUT_BEFORE = '''{% extends "base.html" %}
{% block content %}
<form id="payment-form">
  <div id="card-element"><!-- Stripe.js injects the Card Element --></div>
  <button id="submit">Pay</button>
  <div id="card-errors" role="alert"></div>
</form>
<script src="{{ stripe_js_url }}"></script>
<script>
  const stripe = Stripe("{{ publishable_key }}");
  const card = stripe.elements().create("card");
  card.mount("#card-element");
  document.getElementById("payment-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const cart = JSON.parse(localStorage.getItem("cart"));
    const res = await fetch("/create-payment-intent", {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify({cart})});
    const {clientSecret} = await res.json();
    const {error} = await stripe.confirmCardPayment(clientSecret, {payment_method: {card}});
    if (error) document.getElementById("card-errors").textContent = error.message;
    else window.location = "/thanks";
  });
</script>
{% endblock %}
'''

CATALOGUE_HTML = '''<!doctype html>
<html><head><title>Fieldhouse Goods</title></head>
<body>
<h1>Fieldhouse Goods</h1>
<ul class="products">
  <li data-id="tote">Canvas Tote — €25.00 <button>Add to cart</button></li>
  <li data-id="mug">Enamel Mug — €12.00 <button>Add to cart</button></li>
  <li data-id="cap">Field Cap — €18.00 <button>Add to cart</button></li>
</ul>
<a href="/checkout">Checkout</a>
</body></html>'''


def pip_log() -> str:
    """A long install log: exercises the inline cap and the output sidecar."""
    lines = ["Collecting flask==3.1.0", "  Using cached flask-3.1.0-py3-none-any.whl (102 kB)"]
    for i in range(700):
        lines.append(f"  Requirement already satisfied: dependency-{i:04d}>=1.{i % 9} in ./.venv/lib/python3.11/site-packages (from stripe==13.0.1) (1.{i % 9}.{i % 7})")
    lines.append("Successfully installed flask-3.1.0 stripe-13.0.1")
    return "\n".join(lines) + "\n"


def product(pid: str, name: str, price: str) -> dict:
    return {"id": pid, "object": "product", "active": True, "created": CREATED - 86400, "default_price": price,
            "description": None, "images": [], "livemode": False, "marketing_features": [], "metadata": {},
            "name": name, "package_dimensions": None, "shippable": True, "statement_descriptor": None,
            "tax_code": None, "type": "good", "unit_label": None, "updated": CREATED - 86400, "url": None}


def price(pid: str, prod: str, amount: int) -> dict:
    return {"id": pid, "object": "price", "active": True, "billing_scheme": "per_unit", "created": CREATED - 86400,
            "currency": "eur", "custom_unit_amount": None, "livemode": False, "lookup_key": None, "metadata": {},
            "nickname": None, "product": prod, "recurring": None, "tax_behavior": "unspecified", "tiers_mode": None,
            "transform_quantity": None, "type": "one_time", "unit_amount": amount, "unit_amount_decimal": str(amount)}


def promotion_code(redeemed: int) -> dict:
    return {"id": "promo_1QbXlaunch20", "object": "promotion_code", "active": True, "code": "LAUNCH20",
            "created": CREATED - 3600, "customer": None, "expires_at": None, "livemode": False, "max_redemptions": None,
            "metadata": {}, "promotion": {"type": "coupon", "coupon": "LAUNCH20COUPON"},
            "restrictions": {"first_time_transaction": False, "minimum_amount": None, "minimum_amount_currency": None},
            "times_redeemed": redeemed}


SESSION_ID = "cs_test_a1Pq8sEmbedMigr4tion9xYz"
PI_ID = "pi_3QbXemb3dMigr4tion01"


def session(status: str, paid: bool) -> dict:
    subtotal = 2 * 2500 + 1200
    discount = 1240 if paid else 0
    return {
        "id": SESSION_ID, "object": "checkout.session", "adaptive_pricing": {"enabled": False},
        "after_expiration": None, "allow_promotion_codes": True, "amount_subtotal": subtotal,
        "amount_total": subtotal - discount, "automatic_tax": {"enabled": False, "liability": None, "status": None},
        "billing_address_collection": None, "cancel_url": None, "client_reference_id": None,
        "client_secret": f"{SESSION_ID}_secret_fidwbEhqYWpgdWpsbSc", "created": CREATED + 240, "currency": "eur",
        "customer": None, "customer_creation": "if_required",
        "customer_details": {"email": "ada@example.com", "name": "Ada Lovelace", "address": {"country": "DE"}} if paid else None,
        "customer_email": None, "discounts": [{"promotion_code": "promo_1QbXlaunch20"}] if paid else [],
        "expires_at": CREATED + 240 + 86400, "invoice": None, "livemode": False, "locale": None, "metadata": {},
        "mode": "payment", "payment_intent": PI_ID if paid else None, "payment_link": None,
        "payment_method_types": ["card"], "payment_status": "paid" if paid else "unpaid",
        "redirect_on_completion": "always", "return_url": "http://localhost:4242/return?session_id={CHECKOUT_SESSION_ID}",
        "status": status, "submit_type": None, "subscription": None, "success_url": None,
        "total_details": {"amount_discount": discount, "amount_shipping": 0, "amount_tax": 0},
        "ui_mode": "embedded", "url": None,
        "line_items": {"object": "list", "has_more": False, "url": f"/v1/checkout/sessions/{SESSION_ID}/line_items", "data": [
            {"id": "li_1QbXtote", "object": "item", "description": "Canvas Tote", "price": {"id": "price_1QbXtoteEUR2500"}, "quantity": 2, "amount_subtotal": 5000, "amount_total": 4000, "currency": "eur"},
            {"id": "li_1QbXmug", "object": "item", "description": "Enamel Mug", "price": {"id": "price_1QbXmugEUR1200"}, "quantity": 1, "amount_subtotal": 1200, "amount_total": 960, "currency": "eur"},
        ]},
    }


def payment_intent() -> dict:
    return {"id": PI_ID, "object": "payment_intent", "amount": 4960, "amount_capturable": 0, "amount_received": 4960,
            "automatic_payment_methods": None, "canceled_at": None, "cancellation_reason": None,
            "capture_method": "automatic_async", "client_secret": f"{PI_ID}_secret_Zx81", "confirmation_method": "automatic",
            "created": CREATED + 301, "currency": "eur", "customer": None, "description": None,
            "last_payment_error": None, "latest_charge": "ch_3QbXemb3dMigr4tion01", "livemode": False, "metadata": {},
            "next_action": None, "payment_method": "pm_1QbXcard4242", "payment_method_types": ["card"],
            "receipt_email": None, "setup_future_usage": None, "shipping": None, "status": "succeeded"}


def charge() -> dict:
    return {"id": "ch_3QbXemb3dMigr4tion01", "object": "charge", "amount": 4960, "amount_captured": 4960,
            "amount_refunded": 0, "balance_transaction": "txn_3QbXemb3dMigr4tion01",
            "billing_details": {"email": "ada@example.com", "name": "Ada Lovelace"}, "captured": True,
            "created": CREATED + 302, "currency": "eur", "disputed": False, "livemode": False, "metadata": {},
            "outcome": {"network_status": "approved_by_network", "risk_level": "normal", "seller_message": "Payment complete.", "type": "authorized"},
            "paid": True, "payment_intent": PI_ID, "payment_method": "pm_1QbXcard4242",
            "payment_method_details": {"type": "card", "card": {"brand": "visa", "last4": "4242", "exp_month": 12, "exp_year": 2034, "funding": "credit"}},
            "refunded": False, "status": "succeeded"}


class Episode:
    """Keeps the clock, turn, token count and call ids while a sample is written."""

    def __init__(self, writer: TraceWriter) -> None:
        self.w = writer
        self.t = 0.0
        self.turn = 0
        self.context = 4200  # tokens in the prompt so far
        self.calls = 0

    def next_turn(self) -> None:
        if self.turn:
            self.w.end_turn()
        self.turn += 1

    def say(self, text: str, *, think: float, out_tokens: int, reasoning: str = "", role: str = "assistant") -> None:
        self.t += think
        if role != "assistant":
            self.w.write(ModelMessage(t=self.t, turn=self.turn, role=role, text=text))
            return
        tokens_in = self.context
        self.context += out_tokens
        cost = round(tokens_in * PRICE_IN + out_tokens * PRICE_OUT, 6)
        self.w.write(ModelMessage(t=self.t, turn=self.turn, text=text, reasoning=reasoning, model=MODEL,
                                  tokens_in=tokens_in, tokens_out=out_tokens, cost_usd=cost))

    def tool(self, tool: str, args: dict, output: str, *, took: float, server: str = "", exit_code: int | None = None,
             is_error: bool = False) -> None:
        self.calls += 1
        call_id = f"toolu_01{self.calls:02d}Qb{tool[:3]}X"
        self.t += 0.05
        self.w.write(ToolCall(t=self.t, turn=self.turn, call_id=call_id, tool=tool, arguments=args, server=server or tool.split("_")[0]))
        self.t += took
        self.w.write(ToolResult(t=self.t, turn=self.turn, call_id=call_id, tool=tool, output=output, duration=took,
                                exit_code=exit_code, is_error=is_error))
        self.context += min(len(output) // 4, 6000)

    def obj(self, data: dict, change: str, event_type: str, n: int, request_id: str = "") -> None:
        self.t += 0.2
        self.w.write(StripeObject(t=self.t, turn=self.turn, object_id=data["id"], object_type=data["object"], change=change,
                                  data=data, event_id=f"evt_1QbX{n:04d}", event_type=event_type, request_id=request_id))

    def verdict(self, name: str, status: str, evidence: dict, trigger: str, final: bool = False) -> None:
        weight, description = next((w, d) for c, w, d in CRITERIA if c == name)
        self.t += 0.1
        self.w.write(GraderVerdict(t=self.t, turn=self.turn, criterion=name, status=status, weight=weight,
                                   description=description, evidence=evidence, trigger=trigger, final=final))

    def service(self, status: str, text: str = "", *, name: str = "app", stream: str = "", pid: int | None = None) -> None:
        self.t += 0.02
        self.w.write(Service(t=self.t, turn=self.turn, service=name, status=status, text=text, stream=stream, pid=pid))


def header(title: str, variant: str) -> Header:
    return Header(
        env="checkout-migration", agent="anthropic", model=MODEL, title=title,
        seeds={"emulator": 4242}, versions={"stripebench": "0.1.0", "stripe_api": "2026-10-28.endive", "agent": "0.1.0"},
        started="2025-11-20T14:02:11Z", backend="emulator", sandbox="local",
        extra={"hand_made": True, "variant": variant,
               "note": "Hand-made sample written by scripts/make_sample_replays.py; recorded runs replace it once the runtime lands."},
    )


def common_start(ep: Episode) -> None:
    """Setup (turn 0) and turns 1-5: explore, then edit the server and the template."""
    ep.service("starting", "flask --app server run --port 4242", pid=31337)
    ep.service("healthy", "GET / → 200 in 41 ms")
    ep.service("healthy", "listening on 127.0.0.1:12111", name="stripe-emulator")
    for i, (pid, name, prc, amount) in enumerate([
        ("prod_QbXtote", "Canvas Tote", "price_1QbXtoteEUR2500", 2500),
        ("prod_QbXmug", "Enamel Mug", "price_1QbXmugEUR1200", 1200),
        ("prod_QbXcap", "Field Cap", "price_1QbXcapEUR1800", 1800),
    ]):
        ep.obj(product(pid, name, prc), "created", "product.created", 2 * i + 1)
        ep.obj(price(prc, pid, amount), "created", "price.created", 2 * i + 2)
    ep.obj(promotion_code(0), "created", "promotion_code.created", 7)
    for name, _, _ in CRITERIA:
        ep.verdict(name, "pending", {}, "setup")
    ep.say("Migrate the storefront in workspace/ from the Card Element + PaymentIntent flow to Stripe Embedded Checkout. "
           "Keep the catalogue page working. When done, buy the cart (2 × Canvas Tote, 1 × Enamel Mug) in the browser using the "
           "promotion code LAUNCH20 and submit the Checkout Session id with the submit tool.", think=0.3, out_tokens=0, role="user")

    ep.next_turn()
    ep.say("I'll start by looking at how the app is laid out.", think=4.8, out_tokens=96,
           reasoning="Need to see the Flask app and templates before changing the payment flow.")
    ep.tool("files_list", {"path": "."}, "requirements.txt\nserver.py\ntemplates/base.html\ntemplates/checkout.html\n"
            "templates/index.html\ntemplates/thanks.html\nstatic/cart.js\n", took=0.04, server="files")

    ep.next_turn()
    ep.say("Let me read the server and the checkout template.", think=3.1, out_tokens=74)
    ep.tool("files_read", {"path": "server.py"}, SERVER_BEFORE, took=0.03, server="files")
    ep.tool("files_read", {"path": "templates/checkout.html"}, CHECKOUT_BEFORE, took=0.03, server="files")

    ep.next_turn()
    ep.say("The server creates a PaymentIntent and the page confirms it with the Card Element. For Embedded Checkout the "
           "server creates a Checkout Session with ui_mode=embedded and returns its client_secret; the page mounts it with "
           "stripe.initEmbeddedCheckout. I'll make sure the dependencies are installed first.", think=9.6, out_tokens=412,
           reasoning="Embedded Checkout needs: mode=payment, ui_mode=embedded, line_items from the cart, allow_promotion_codes "
                     "so LAUNCH20 can be entered, and a return_url with {CHECKOUT_SESSION_ID}.")
    ep.tool("shell", {"command": "pip install -r requirements.txt"}, pip_log(), took=6.2, server="shell", exit_code=0)


def edit_server(ep: Episode, with_return_url: bool) -> None:
    ep.next_turn()
    lines = [
        "@app.post(\"/create-checkout-session\")",
        "def create_checkout_session():",
        "    cart = request.get_json()[\"cart\"]",
        "    session = stripe.checkout.Session.create(",
        "        ui_mode=\"embedded\",",
        "        mode=\"payment\",",
        "        line_items=[{\"price\": PRODUCTS[i[\"id\"]][\"price\"], \"quantity\": i[\"quantity\"]} for i in cart],",
        "        allow_promotion_codes=True,",
    ]
    if with_return_url:
        lines.append("        return_url=request.host_url + \"return?session_id={CHECKOUT_SESSION_ID}\",")
    lines += ["    )", "    return jsonify(clientSecret=session.client_secret)"]
    new_route = "\n".join(lines) + "\n"
    ep.say("Replacing the PaymentIntent route with one that creates an embedded Checkout Session.", think=7.4, out_tokens=688)
    ep.tool("files_edit", {"path": "server.py", "old": "@app.post(\"/create-payment-intent\")\ndef create_payment_intent():\n    ...",
                           "new": new_route}, "Edited server.py: 1 hunk, +12 −6 lines.", took=0.02, server="files")
    if with_return_url:
        ep.tool("files_edit", {"path": "server.py", "old": "if __name__ == \"__main__\":", "new":
                               "@app.get(\"/return\")\ndef checkout_return():\n    session = stripe.checkout.Session.retrieve(request.args[\"session_id\"])\n"
                               "    return render_template(\"thanks.html\", session=session)\n\n\nif __name__ == \"__main__\":"},
                "Edited server.py: 1 hunk, +6 lines.", took=0.02, server="files")

    ep.next_turn()
    ep.say("Now the template: mount Embedded Checkout instead of the Card Element.", think=6.2, out_tokens=540)
    ep.tool("files_write", {"path": "templates/checkout.html", "content":
                            "{% extends \"base.html\" %}\n{% block content %}\n<div id=\"checkout\"></div>\n"
                            "<script src=\"{{ stripe_js_url }}\"></script>\n<script>\n  const stripe = Stripe(\"{{ publishable_key }}\");\n"
                            "  const cart = JSON.parse(localStorage.getItem(\"cart\"));\n  stripe.initEmbeddedCheckout({\n"
                            "    fetchClientSecret: async () => (await (await fetch(\"/create-checkout-session\", {method: \"POST\", "
                            "headers: {\"Content-Type\": \"application/json\"}, body: JSON.stringify({cart})})).json()).clientSecret,\n"
                            "  }).then((checkout) => checkout.mount(\"#checkout\"));\n</script>\n{% endblock %}\n"},
            "Wrote templates/checkout.html (17 lines).", took=0.02, server="files")


def restart_and_check_catalogue(ep: Episode) -> None:
    ep.next_turn()
    ep.say("Restarting the app and checking the catalogue still renders.", think=3.9, out_tokens=120)
    ep.service("stopped", "restart requested by the agent")
    ep.service("starting", "flask --app server run --port 4242", pid=31402)
    ep.service("log", " * Running on http://127.0.0.1:4242", stream="stderr")
    ep.service("healthy", "GET / → 200 in 38 ms")
    ep.tool("shell", {"command": "curl -s http://localhost:4242/"}, CATALOGUE_HTML, took=0.12, server="shell", exit_code=0)
    ep.service("log", "127.0.0.1 - - [20/Nov/2025 14:05:02] \"GET / HTTP/1.1\" 200 -", stream="stderr")
    ep.verdict("catalogue_served", "pass", {"status": 200, "products_found": ["Canvas Tote", "Enamel Mug", "Field Cap"]}, "turn_end")


def write_pass(path: Path) -> None:
    with TraceWriter(path, header("Checkout migration: Card Element → Embedded Checkout (passes)", "pass"),
                     secrets=[FAKE_KEY], overwrite=True) as w:
        ep = Episode(w)
        common_start(ep)
        edit_server(ep, with_return_url=True)
        restart_and_check_catalogue(ep)

        ep.next_turn()
        ep.say("Creating a session through the new endpoint to check the server side.", think=4.4, out_tokens=164)
        body = json.dumps({"clientSecret": session("open", False)["client_secret"]})
        ep.tool("shell", {"command": "curl -s -X POST http://localhost:4242/create-checkout-session -H 'Content-Type: application/json' "
                                     "-d '{\"cart\": [{\"id\": \"tote\", \"quantity\": 2}, {\"id\": \"mug\", \"quantity\": 1}]}'"},
                body + "\n", took=0.31, server="shell", exit_code=0)
        ep.service("log", "127.0.0.1 - - [20/Nov/2025 14:05:48] \"POST /create-checkout-session HTTP/1.1\" 200 -", stream="stderr")
        ep.obj(session("open", False), "created", "checkout.session.created", 8, request_id="req_QbXc0ses5ion01")
        evidence = {"session": SESSION_ID}
        ep.verdict("ui_mode_embedded", "pass", {**evidence, "ui_mode": "embedded"}, "evt_1QbX0008", )
        ep.verdict("mode_payment", "pass", {**evidence, "mode": "payment"}, "evt_1QbX0008")
        ep.verdict("line_items_match", "pass", {**evidence, "line_items": [["price_1QbXtoteEUR2500", 2], ["price_1QbXmugEUR1200", 1]]}, "evt_1QbX0008")

        ep.next_turn()
        ep.say("The server side works. Now the purchase in the browser with LAUNCH20.", think=5.2, out_tokens=230)
        ep.tool("browser_run", {"steps": [
            {"goto": "http://localhost:4242/"}, {"click": "li[data-id=tote] button"}, {"click": "li[data-id=tote] button"},
            {"click": "li[data-id=mug] button"}, {"goto": "http://localhost:4242/checkout"},
            {"frame": "embedded-checkout", "fill": {"email": "ada@example.com", "promotion_code": "LAUNCH20",
                                                     "card_number": "4242 4242 4242 4242", "expiry": "12/34", "cvc": "123",
                                                     "name": "Ada Lovelace", "country": "DE"}},
            {"click": "Pay"}, {"wait_for_url": "**/return?session_id=*"}]},
                "Page: http://localhost:4242/return?session_id=" + SESSION_ID + "\nTitle: Thanks — Fieldhouse Goods\n\n"
                "Thanks for your order, Ada!\nCanvas Tote × 2 — €50.00\nEnamel Mug × 1 — €12.00\nLAUNCH20 (−20%) — −€12.40\n"
                "Total paid — €49.60\n", took=9.8, server="browser")
        ep.obj(promotion_code(1), "updated", "promotion_code.updated", 9)
        ep.obj(payment_intent(), "created", "payment_intent.succeeded", 10, request_id="req_QbXc0nfirm02")
        ep.obj(charge(), "created", "charge.succeeded", 11, request_id="req_QbXc0nfirm02")
        ep.obj(session("complete", True), "updated", "checkout.session.completed", 12, request_id="req_QbXc0nfirm02")
        ep.verdict("paid", "pass", {"session": SESSION_ID, "status": "complete", "payment_status": "paid", "amount_total": 4960}, "evt_1QbX0012")
        ep.verdict("promotion_discount", "pass", {"session": SESSION_ID, "promotion_code": "LAUNCH20", "amount_discount": 1240}, "evt_1QbX0012")

        ep.next_turn()
        ep.say(f"Done. The storefront now uses Embedded Checkout (ui_mode=embedded, mode=payment, promotion codes allowed, a "
               f"return page), the catalogue is unchanged, and the test purchase with LAUNCH20 was paid: €49.60 after the 20% "
               f"discount. Submitting {SESSION_ID}.", think=6.7, out_tokens=286)
        ep.tool("submit", {"session_id": SESSION_ID}, "Submitted. The grader will check the session.", took=0.05, server="grader")
        for name, _, _ in CRITERIA:
            ep.verdict(name, "pass", {"session": SESSION_ID}, "final", final=True)
        ep.t += 0.4
        w.write(EpisodeEnd(t=ep.t, turn=ep.turn, reason="agent_done", score=1.0, passed=True))


def write_400(path: Path) -> None:
    with TraceWriter(path, header("Checkout migration: HTTP 400 taken for success (fails)", "http-400"),
                     secrets=[FAKE_KEY], overwrite=True) as w:
        ep = Episode(w)
        common_start(ep)
        edit_server(ep, with_return_url=False)
        restart_and_check_catalogue(ep)

        ep.next_turn()
        ep.say("Let me check the endpoint responds.", think=3.8, out_tokens=102)
        error = {"error": {"code": "parameter_missing", "doc_url": "https://stripe.com/docs/error-codes/parameter-missing",
                           "message": "Missing required param: return_url.", "param": "return_url",
                           "request_log_url": "https://dashboard.stripe.com/test/logs/req_QbXb4dR3qu3st0?t=1763647548",
                           "type": "invalid_request_error"}}
        ep.tool("shell", {"command": "curl -s -X POST http://localhost:4242/create-checkout-session -H 'Content-Type: application/json' "
                                     "-d '{\"cart\": [{\"id\": \"tote\", \"quantity\": 2}, {\"id\": \"mug\", \"quantity\": 1}]}'"},
                json.dumps(error, indent=2) + "\n", took=0.29, server="shell", exit_code=0)
        ep.service("log", f"stripe._error.InvalidRequestError: Request req_QbXb4dR3qu3st0: Missing required param: return_url. "
                          f"(api_key={FAKE_KEY})", stream="stderr")
        ep.service("log", "127.0.0.1 - - [20/Nov/2025 14:05:48] \"POST /create-checkout-session HTTP/1.1\" 400 -", stream="stderr")
        ep.tool("shell", {"command": f"curl -s https://api.stripe.com/v1/checkout/sessions -u {FAKE_KEY}: -d ui_mode=embedded "
                                     "-d mode=payment -d 'line_items[0][price]=price_1QbXtoteEUR2500' -d 'line_items[0][quantity]=2' "
                                     "-w '\\nHTTP %{http_code}\\n'"},
                json.dumps(error, indent=2) + "\nHTTP 400\n", took=0.44, server="shell", exit_code=0)

        ep.next_turn()
        ep.say("The endpoint responded, migration complete. The server now creates an embedded Checkout Session and the "
               "template mounts it with initEmbeddedCheckout.", think=4.1, out_tokens=118)
        for name in ("ui_mode_embedded", "mode_payment", "line_items_match", "paid", "promotion_discount"):
            ep.verdict(name, "fail", {"sessions_found": 0, "last_stripe_error": "parameter_missing: return_url"}, "final", final=True)
        ep.verdict("catalogue_served", "pass", {"status": 200}, "final", final=True)
        ep.t += 0.4
        w.write(EpisodeEnd(t=ep.t, turn=ep.turn, reason="agent_done", score=round(1 / 7, 4), passed=False))


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "replays"
    out.mkdir(parents=True, exist_ok=True)
    for name, make in (("checkout-migration-pass.jsonl", write_pass), ("checkout-migration-400.jsonl", write_400)):
        path = out / name
        shutil.rmtree(sidecar_dir(path), ignore_errors=True)
        make(path)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
