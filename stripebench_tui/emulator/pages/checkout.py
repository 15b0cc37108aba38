"""The hosted Checkout page (a session's ``url``), the embedded Checkout frame and their page-only endpoints.

The pages are the emulator's own UI: ``/c/pay/{id}`` (hosted), ``/c/embedded/{id}?secret=…`` (the iframe that
the stripe.js stand-in mounts) and ``/_checkout/{id}/{state,submit,promotion,authenticate}`` (JSON, not Stripe's
API; graders never need them). Every change runs in an emulator transaction through ``checkout_completion``.
"""

from __future__ import annotations

import json
from html import escape
from string import Template
from typing import Any, Callable

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from stripebench_tui.emulator.pages.common import STATIC, transaction_result
from stripebench_tui.emulator.registry import page_route
from stripebench_tui.emulator.resources import checkout_completion as completion
from stripebench_tui.emulator.resources import checkout_totals as totals
from stripebench_tui.emulator.resources.checkout_sessions import expire_if_due

COUNTRIES = [("US", "United States"), ("GB", "United Kingdom"), ("CA", "Canada"), ("AU", "Australia"),
             ("DE", "Germany"), ("FR", "France"), ("IE", "Ireland"), ("NL", "Netherlands"), ("ES", "Spain"),
             ("IT", "Italy"), ("SE", "Sweden"), ("CH", "Switzerland"), ("JP", "Japan"), ("SG", "Singapore"),
             ("NZ", "New Zealand"), ("BR", "Brazil"), ("MX", "Mexico"), ("IN", "India")]
_NAMES = dict(COUNTRIES)
LABELS = {"payment": "Pay", "subscription": "Subscribe", "setup": "Save"}


def _address_fields(prefix: str, countries: list[str] | None) -> str:
    """Country, Address line 1, City, Postal code inputs (ids ``<prefix>_…``) with real ``<label for>``."""
    codes = countries or [code for code, _ in COUNTRIES]
    options = "".join(f'<option value="{escape(c)}">{escape(_NAMES.get(c, c))}</option>' for c in codes)
    row = ('<label for="{p}_{k}">{label}</label><input id="{p}_{k}" name="{p}_{k}" autocomplete="{auto}">')
    return "\n".join([
        f'<label for="{prefix}_country">Country</label><select id="{prefix}_country" name="{prefix}_country" '
        f'autocomplete="country">{options}</select>',
        row.format(p=prefix, k="line1", label="Address line 1", auto="address-line1"),
        row.format(p=prefix, k="city", label="City", auto="address-level2"),
        row.format(p=prefix, k="postal_code", label="Postal code", auto="postal-code"),
    ])


def page_state(ctx: Any, session: dict[str, Any]) -> dict[str, Any]:
    """What the page shows: items, totals, which fields to collect, the button label."""
    items = []
    for item in session["_items"]:
        price = ctx.find("price", item["price"]) or {}
        recurring = price.get("recurring")
        interval = None
        if recurring:
            count = recurring.get("interval_count", 1)
            interval = recurring["interval"] if count == 1 else f"{count} {recurring['interval']}s"
        adjustable = item.get("adjustable_quantity") or {}
        items.append({"name": item.get("description") or "Item", "quantity": item["quantity"],
                      "unit_amount": item["_unit_amount"], "amount_subtotal": item["amount_subtotal"],
                      "interval": interval,
                      "adjustable": ({"minimum": adjustable.get("minimum") or 0,
                                      "maximum": adjustable.get("maximum") or 99}
                                     if adjustable.get("enabled") else None)})
    coupon, promo_id = totals.session_coupon(ctx, session)
    promo = ctx.find("promotion_code", promo_id) if promo_id else None
    customer = ctx.find("customer", session["customer"]) if session.get("customer") else None
    email = session.get("customer_email") or (customer or {}).get("email")
    details = session.get("customer_details") or {}
    return {
        "id": session["id"], "mode": session["mode"], "status": session["status"],
        "payment_status": session["payment_status"], "currency": session.get("currency") or "usd",
        "merchant": "Stripe emulator", "items": items, "subtotal": session.get("amount_subtotal") or 0,
        "discount": ((session.get("total_details") or {}).get("amount_discount") or 0),
        "total": session.get("amount_total") or 0,
        "shipping": _shipping(ctx, session),
        "promotion_code": promo["code"] if promo else (coupon.get("name") or coupon["id"]) if coupon else None,
        "allow_promotion_codes": bool(session.get("allow_promotion_codes")),
        "email": email or details.get("email"), "email_locked": bool(email),
        "billing_address": session.get("billing_address_collection") == "required",
        "shipping_countries": (session.get("shipping_address_collection") or {}).get("allowed_countries"),
        "phone": session["phone_number_collection"]["enabled"], "submit_label": LABELS[session["mode"]],
        "cancel_url": session.get("cancel_url") if session["_ui"] == "hosted" else None,
    }


def _shipping(ctx: Any, session: dict[str, Any]) -> dict[str, Any] | None:
    cost = session.get("shipping_cost")
    if not cost:
        return None
    rate = ctx.find("shipping_rate", cost["shipping_rate"]) or {}
    return {"name": rate.get("display_name") or "Shipping", "amount": cost["amount_total"]}


def _load(ctx: Any, session_id: str, secret: str | None) -> dict[str, Any] | None:
    """The session this page may act on (embedded ones need their client secret), or None."""
    session = ctx.find("checkout.session", session_id)
    if session is None or session.get("object") != "checkout.session":
        return None
    if session["_ui"] == "embedded" and secret != session.get("client_secret"):
        return None
    return expire_if_due(ctx, session)


def _html(request: Request, session: dict[str, Any], embedded: bool, secret: str) -> HTMLResponse:
    template = Template((STATIC / "checkout.html").read_text())
    countries = (session.get("shipping_address_collection") or {}).get("allowed_countries")
    return HTMLResponse(template.substitute(
        body_class="embedded" if embedded else "hosted", session_id=escape(session["id"]), secret=escape(secret),
        embedded="true" if embedded else "false", shipping_fields=_address_fields("shipping", countries),
        billing_fields=_address_fields("billing", None)))


def _not_found(message: str) -> HTMLResponse:
    return HTMLResponse(f"<!doctype html><title>Checkout</title><link rel=stylesheet href=/static/checkout.css>"
                        f"<main class=checkout><section class=pay><h2>{escape(message)}</h2></section></main>",
                        status_code=404)


@page_route("/c/pay/{session_id}")
def hosted_page(emulator: Any) -> Callable[[Request], Any]:
    """The hosted Checkout page."""
    async def endpoint(request: Request) -> Response:
        session = transaction_result(emulator, request, lambda ctx: _load(ctx, request.path_params["session_id"], None))
        if not isinstance(session, dict) or session["_ui"] != "hosted":
            return _not_found("This Checkout page does not exist.")
        return _html(request, session, embedded=False, secret="")

    return endpoint


@page_route("/c/embedded/{session_id}")
def embedded_frame(emulator: Any) -> Callable[[Request], Any]:
    """The embedded Checkout document (mounted in an iframe by ``initEmbeddedCheckout``)."""
    async def endpoint(request: Request) -> Response:
        secret = request.query_params.get("secret", "")
        session = transaction_result(emulator, request,
                                     lambda ctx: _load(ctx, request.path_params["session_id"], secret))
        if not isinstance(session, dict) or session["_ui"] != "embedded":
            return _not_found("This embedded Checkout does not exist or its client secret is wrong.")
        return _html(request, session, embedded=True, secret=secret)

    return endpoint


def _action(emulator: Any, work: Callable[[Any, dict[str, Any], dict[str, Any]], dict[str, Any] | None]):
    async def endpoint(request: Request) -> Response:
        body: dict[str, Any] = {}
        if request.method == "POST":
            try:
                body = json.loads(await request.body() or b"{}")
            except ValueError:
                return JSONResponse({"error": {"message": "The page sent a malformed body."}}, status_code=400)
            if not isinstance(body, dict):
                body = {}

        def run(ctx: Any) -> tuple[int, dict[str, Any]]:
            session = _load(ctx, request.path_params["session_id"], request.query_params.get("secret"))
            if session is None:
                return 404, {"error": {"message": "No such Checkout Session (or wrong client secret)."}}
            result = work(ctx, session, body) or {}
            result["state"] = page_state(ctx, ctx.get("checkout.session", session["id"]))
            return 200, result

        status, result = transaction_result(emulator, request, run)
        return JSONResponse(result, status_code=status)

    return endpoint


@page_route("/_checkout/{session_id}/state")
def state_endpoint(emulator: Any) -> Callable[[Request], Any]:
    """The page's view of a session (JSON)."""
    return _action(emulator, lambda ctx, session, body: None)


@page_route("/_checkout/{session_id}/submit", methods=["POST"])
def submit_endpoint(emulator: Any) -> Callable[[Request], Any]:
    """The Pay / Subscribe / Save button."""
    return _action(emulator, lambda ctx, session, body: completion.submit(
        ctx, session, {k: str(v) for k, v in body.items() if isinstance(v, (str, int))}))


@page_route("/_checkout/{session_id}/promotion", methods=["POST"])
def promotion_endpoint(emulator: Any) -> Callable[[Request], Any]:
    """The promotion code's Apply button."""
    return _action(emulator, lambda ctx, session, body: completion.apply_promotion_code(
        ctx, session, str(body.get("code") or "")))


@page_route("/_checkout/{session_id}/authenticate", methods=["POST"])
def authenticate_endpoint(emulator: Any) -> Callable[[Request], Any]:
    """The 3-D Secure challenge's Complete / Fail buttons."""
    return _action(emulator, lambda ctx, session, body: completion.authenticate(ctx, session,
                                                                                bool(body.get("success"))))


@page_route("/_checkout/{session_id}/quantity", methods=["POST"])
def quantity_endpoint(emulator: Any) -> Callable[[Request], Any]:
    """A line item's quantity picker (only for ``adjustable_quantity[enabled]`` items)."""
    return _action(emulator, lambda ctx, session, body: completion.set_quantity(
        ctx, session, body.get("item"), body.get("quantity")))
