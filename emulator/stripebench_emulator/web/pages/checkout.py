"""The hosted Checkout page (a session's ``url``), the embedded Checkout frame and their page-only endpoints.

The pages are the emulator's own UI: ``/c/pay/{id}`` (hosted), ``/c/embedded/{id}?secret=…`` (the iframe that
the stripe.js stand-in mounts) and ``/_checkout/{id}/{state,submit,promotion,authenticate}`` (JSON, not Stripe's
API; graders never need them). Every change runs in an emulator transaction through ``checkout_completion``.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from string import Template
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from stripebench_emulator.api import checkout_completion as completion
from stripebench_emulator.api import checkout_options as options
from stripebench_emulator.api.checkout_sessions import expire_if_due
from stripebench_emulator.model.registry import page_route
from stripebench_emulator.rules import checkout_totals as totals
from stripebench_emulator.web.bodies import invalid_body, json_object
from stripebench_emulator.web.pages.common import STATIC, transaction_result

if TYPE_CHECKING:
    from stripebench_emulator.model.context import RequestContext
    from stripebench_emulator.model.engine import Emulator

COUNTRIES = [("US", "United States"), ("GB", "United Kingdom"), ("CA", "Canada"), ("AU", "Australia"),
             ("DE", "Germany"), ("FR", "France"), ("IE", "Ireland"), ("NL", "Netherlands"), ("ES", "Spain"),
             ("IT", "Italy"), ("SE", "Sweden"), ("CH", "Switzerland"), ("JP", "Japan"), ("SG", "Singapore"),
             ("NZ", "New Zealand"), ("BR", "Brazil"), ("MX", "Mexico"), ("IN", "India")]
_NAMES = dict(COUNTRIES)
TOS_DEFAULT = "I agree to the Terms of Service"
PROMOTIONS_TEXT = "Keep me updated with news and personalized offers"
REUSE_TEXT = ("You allow Stripe emulator to charge your card for future payments under its terms, until you "
              "cancel or remove the card.")


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


def page_state(ctx: RequestContext, session: dict[str, Any]) -> dict[str, Any]:
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
                      "interval": interval, "full_amount": item["_unit_amount"] * item["quantity"],
                      "adjustable": ({"minimum": adjustable.get("minimum") or 0,
                                      "maximum": adjustable.get("maximum") or 99}
                                     if adjustable.get("enabled") else None)})
    trial_end = (session.get("_terms") or {}).get("trial_end")
    offered = []
    for index, offer in enumerate(session.get("optional_items") or []):
        if index in (session.get("_added_optional") or []):
            continue
        price = ctx.find("price", offer["price"]) or {}
        product = ctx.find("product", price.get("product") or "") or {}
        offered.append({"index": index, "name": product.get("name") or "Item", "quantity": offer["quantity"],
                        "unit_amount": price.get("unit_amount") or 0})
    coupon, promo_id = totals.session_coupon(ctx, session)
    promo = ctx.find("promotion_code", promo_id) if promo_id else None
    email = _known_email(ctx, session)
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
        "phone": session["phone_number_collection"]["enabled"], "submit_label": options.submit_label(session),
        "tax": (session.get("total_details") or {}).get("amount_tax") or 0,
        "trial_days": round((trial_end - session["created"]) / options.DAY) if trial_end else None,
        "optional_items": offered,
        "shipping_rate": (session.get("shipping_cost") or {}).get("shipping_rate"),
        "cancel_url": session.get("cancel_url") if session["_ui"] == "hosted" else None,
    }


def _shipping(ctx: RequestContext, session: dict[str, Any]) -> dict[str, Any] | None:
    cost = session.get("shipping_cost")
    if not cost:
        return None
    rate = ctx.find("shipping_rate", cost["shipping_rate"]) or {}
    return {"name": rate.get("display_name") or "Shipping", "amount": cost["amount_total"]}


def _load(ctx: RequestContext, session_id: str, secret: str | None) -> dict[str, Any] | None:
    """The session this page may act on (embedded ones need their client secret), or None."""
    session = ctx.find("checkout.session", session_id)
    if session is None or session.get("object") != "checkout.session":
        return None
    if session["_ui"] == "embedded" and secret != session.get("client_secret"):
        return None
    return expire_if_due(ctx, session)


def _text(message: str | None, block_id: str) -> str:
    return f'<p class="custom-text" id="{block_id}">{escape(message)}</p>' if message else ""


def _fieldset(legend: str, inner: str, block_id: str) -> str:
    return f'<fieldset id="{block_id}"><legend>{escape(legend)}</legend>\n{inner}\n</fieldset>'


def _custom_field(field: dict[str, Any]) -> str:
    """One custom field: a labelled select (dropdown) or input (text, numeric), ``Optional`` beside the label."""
    name = "custom_field_" + field["key"]
    label = f'<label for="{escape(name)}">{escape(field["label"]["custom"])}</label>'
    hint = '<span class="hint">Optional</span>' if field["optional"] else ""
    if field["type"] == "dropdown":
        default = field["dropdown"].get("default_value")
        choices = "".join(f'<option value="{escape(o["value"])}"{" selected" if o["value"] == default else ""}>'
                          f'{escape(o["label"])}</option>' for o in field["dropdown"]["options"])
        blank = "" if default else '<option value="">Select…</option>'
        control = f'<select id="{escape(name)}" name="{escape(name)}">{blank}{choices}</select>'
    else:
        rules = field[field["type"]] or {}
        attrs = ' inputmode="numeric"' if field["type"] == "numeric" else ""
        if rules.get("maximum_length"):
            attrs += f' maxlength="{rules["maximum_length"]}"'
        if rules.get("default_value"):
            attrs += f' value="{escape(rules["default_value"])}"'
        control = f'<input id="{escape(name)}" name="{escape(name)}" autocomplete="off"{attrs}>'
    return f'<div class="field">{label}{hint}{control}</div>'


def _shipping_choices(ctx: RequestContext, session: dict[str, Any]) -> str:
    chosen = (session.get("shipping_cost") or {}).get("shipping_rate")
    rows = []
    for i, option in enumerate(session.get("shipping_options") or []):
        rate = ctx.find("shipping_rate", option["shipping_rate"]) or {}
        amount = option["shipping_amount"]
        price = "Free" if amount == 0 else _money(amount, session.get("currency") or "usd")
        rows.append(f'<div class="choice"><input type="radio" name="shipping_rate" id="shipping_rate_{i}" '
                    f'value="{escape(option["shipping_rate"])}"{" checked" if option["shipping_rate"] == chosen else ""}>'
                    f'<label for="shipping_rate_{i}">{escape(rate.get("display_name") or "Shipping")} · '
                    f'{escape(price)}</label></div>')
    return _fieldset("Shipping method", "\n".join(rows), "shipping-options-block") if rows else ""


def _money(amount: int, currency: str) -> str:
    symbols = {"usd": "$", "eur": "€", "gbp": "£", "cad": "CA$", "aud": "A$"}
    zero_decimal = currency in ("jpy", "krw", "vnd", "clp")
    value = f"{amount:,}" if zero_decimal else f"{amount / 100:,.2f}"
    return f"{symbols[currency]}{value}" if currency in symbols else f"{value} {currency.upper()}"


def _known_email(ctx: RequestContext, session: dict[str, Any]) -> str | None:
    """The email the session fixes (``customer_email`` or its customer's), which the page shows read-only."""
    customer = ctx.find("customer", session["customer"]) if session.get("customer") else None
    return session.get("customer_email") or (customer or {}).get("email")


def _email_attrs(ctx: RequestContext, session: dict[str, Any]) -> str:
    """A known email is in the HTML itself, read-only: the field never shows empty and editable, then locks."""
    email = _known_email(ctx, session)
    return f' value="{escape(email)}" readonly' if email else ""


def page_parts(ctx: RequestContext, session: dict[str, Any]) -> dict[str, str]:
    """The template's pieces for this session: only the fields and blocks its configuration asks for."""
    text = session.get("custom_text") or {}
    message = lambda name: (text.get(name) or {}).get("message")
    countries = (session.get("shipping_address_collection") or {}).get("allowed_countries")
    consent = session.get("consent_collection") or {}
    tax_ids = session.get("tax_id_collection") or {}
    parts = {
        "promo_block": "", "tax_row": "", "shipping_block": "", "shipping_options_block": "", "billing_block": "",
        "phone_block": "", "custom_fields_block": "", "tax_id_block": "", "consent_block": "",
        "optional_block": "", "trial_block": "", "methods_block": _methods(session),
        "submit_text": _text(message("submit"), "custom-text-submit"),
        "after_submit_text": _text(message("after_submit"), "custom-text-after-submit"),
        "submit_label": escape(options.submit_label(session)),
        "lang": escape((session.get("locale") or "auto").replace("auto", "en")),
        "email_attrs": _email_attrs(ctx, session),
    }
    if session.get("allow_promotion_codes"):
        parts["promo_block"] = """<div class="promo" id="promo-block">
      <label for="promotion_code">Promotion code</label>
      <div class="row">
        <input id="promotion_code" name="promotion_code" autocomplete="off" placeholder="Add promotion code">
        <button type="button" id="apply-promo" class="secondary">Apply</button>
      </div>
      <p class="field-error" id="promotion_code-error" role="alert"></p>
    </div>"""
    if (session.get("automatic_tax") or {}).get("enabled"):
        parts["tax_row"] = '<div id="tax-row"><dt>Tax</dt><dd id="tax"></dd></div>'
    if countries:
        parts["shipping_block"] = _fieldset("Shipping address", _address_fields("shipping", countries)
                                            + _text(message("shipping_address"), "custom-text-shipping"),
                                            "shipping-block")
    parts["shipping_options_block"] = _shipping_choices(ctx, session)
    if session.get("billing_address_collection") == "required":
        parts["billing_block"] = _fieldset("Billing address", _address_fields("billing", None), "billing-block")
    if session["phone_number_collection"]["enabled"]:
        parts["phone_block"] = _fieldset("Phone", '<label for="phone">Phone number</label>'
                                                  '<input id="phone" name="phone" type="tel" autocomplete="tel">',
                                         "phone-block")
    if session.get("custom_fields"):
        parts["custom_fields_block"] = _fieldset("Additional information", "\n".join(
            _custom_field(f) for f in session["custom_fields"]), "custom-fields-block")
    if tax_ids.get("enabled"):
        required = tax_ids.get("required") == "if_supported"
        parts["tax_id_block"] = _fieldset("Business details" + ("" if required else " (optional)"),
                                          '<label for="business_name">Business name</label>'
                                          '<input id="business_name" name="business_name" autocomplete="organization">'
                                          '<label for="tax_id">Tax ID</label>'
                                          '<input id="tax_id" name="tax_id" autocomplete="off">', "tax-id-block")
    boxes = []
    if consent.get("promotions") == "auto":
        boxes.append('<div class="check"><input type="checkbox" id="promotions" name="promotions">'
                     f'<label for="promotions">{PROMOTIONS_TEXT}</label></div>')
    if consent.get("terms_of_service") == "required":
        boxes.append('<div class="check"><input type="checkbox" id="terms_of_service" name="terms_of_service">'
                     f'<label for="terms_of_service">{escape(message("terms_of_service_acceptance") or TOS_DEFAULT)}'
                     '</label></div>')
    reuse = (consent.get("payment_method_reuse_agreement") or {}).get("position", "auto")
    saves_card = session["mode"] in ("subscription", "setup") or bool(
        (session.get("_payment_intent_data") or {}).get("setup_future_usage"))
    if saves_card and reuse == "auto":  # Stripe's notice that the card is kept for future payments
        boxes.append(f'<p class="custom-text" id="reuse-agreement">{REUSE_TEXT}</p>')
    if boxes:
        parts["consent_block"] = '<div class="consent" id="consent-block">' + "".join(boxes) + "</div>"
    if session.get("optional_items"):
        parts["optional_block"] = ('<div class="optional" id="optional-block"><h3>Add to your order</h3>'
                                   '<ul class="items" id="optional-items"></ul></div>')
    trial_end = (session.get("_terms") or {}).get("trial_end")
    if trial_end:
        days = round((trial_end - session["created"]) / options.DAY)
        parts["trial_block"] = f'<p class="trial" id="trial">{days} days free</p>'
    return parts


# What Checkout calls the payment method types a session may name (others are shown by their type).
METHOD_NAMES = {"card": "Card", "kr_card": "Korean card", "payco": "PAYCO", "naver_pay": "Naver Pay",
                "kakao_pay": "Kakao Pay", "samsung_pay": "Samsung Pay", "link": "Link", "us_bank_account": "US bank account",
                "sepa_debit": "SEPA Direct Debit", "ideal": "iDEAL", "bancontact": "Bancontact", "klarna": "Klarna",
                "afterpay_clearpay": "Afterpay", "affirm": "Affirm", "cashapp": "Cash App Pay", "alipay": "Alipay",
                "wechat_pay": "WeChat Pay", "paypal": "PayPal", "eps": "EPS", "giropay": "giropay", "p24": "Przelewy24"}


def _methods(session: dict[str, Any]) -> str:
    """The payment methods the page offers when the session names more than cards (only cards are paid here)."""
    types = session.get("payment_method_types") or ["card"]
    if types == ["card"]:
        return ""
    items = "".join(f'<li data-type="{escape(t)}">{escape(METHOD_NAMES.get(t, t.replace("_", " ").title()))}</li>'
                    for t in types)
    return f'<ul class="methods" id="payment-methods" aria-label="Payment methods">{items}</ul>'


def _html(parts: dict[str, str], session: dict[str, Any], embedded: bool, secret: str) -> HTMLResponse:
    template = Template((STATIC / "checkout.html").read_text())
    return HTMLResponse(template.substitute(
        body_class="embedded" if embedded else "hosted", session_id=escape(session["id"]), secret=escape(secret),
        embedded="true" if embedded else "false", **parts))


def _not_found(message: str) -> HTMLResponse:
    return HTMLResponse(f"<!doctype html><title>Checkout</title><link rel=stylesheet href=/static/checkout.css>"
                        f"<main class=checkout><section class=pay><h2>{escape(message)}</h2></section></main>",
                        status_code=404)


def _with_parts(ctx: RequestContext, session: dict[str, Any] | None) -> list[Any] | None:
    return None if session is None else [session, page_parts(ctx, session)]


@page_route("/c/pay/{session_id}")
def hosted_page(emulator: Emulator) -> Callable[[Request], Any]:
    """The hosted Checkout page."""
    async def endpoint(request: Request) -> Response:
        found = transaction_result(emulator, request, lambda ctx: _with_parts(
            ctx, _load(ctx, request.path_params["session_id"], None)))
        if not isinstance(found, list) or found[0]["_ui"] != "hosted":
            return _not_found("This Checkout page does not exist.")
        return _html(found[1], found[0], embedded=False, secret="")

    return endpoint


@page_route("/c/embedded/{session_id}")
def embedded_frame(emulator: Emulator) -> Callable[[Request], Any]:
    """The embedded Checkout document (mounted in an iframe by ``initEmbeddedCheckout``)."""
    async def endpoint(request: Request) -> Response:
        secret = request.query_params.get("secret", "")
        found = transaction_result(emulator, request, lambda ctx: _with_parts(
            ctx, _load(ctx, request.path_params["session_id"], secret)))
        if not isinstance(found, list) or found[0]["_ui"] != "embedded":
            return _not_found("This embedded Checkout does not exist or its client secret is wrong.")
        return _html(found[1], found[0], embedded=True, secret=secret)

    return endpoint


def _action(emulator: Emulator, work: Callable[[Any, dict[str, Any], dict[str, Any]], dict[str, Any] | None]):
    async def endpoint(request: Request) -> Response:
        body: dict[str, Any] = {}
        if request.method == "POST":
            try:
                body = json_object(await request.body())
            except ValueError as exc:
                return invalid_body(f"The page sent a malformed body: {exc}")

        def run(ctx: RequestContext) -> tuple[int, dict[str, Any]]:
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
def state_endpoint(emulator: Emulator) -> Callable[[Request], Any]:
    """The page's view of a session (JSON)."""
    return _action(emulator, lambda ctx, session, body: None)


@page_route("/_checkout/{session_id}/submit", methods=["POST"])
def submit_endpoint(emulator: Emulator) -> Callable[[Request], Any]:
    """The Pay / Subscribe / Save button."""
    return _action(emulator, lambda ctx, session, body: completion.submit(
        ctx, session, {k: str(v) for k, v in body.items() if isinstance(v, (str, int))}))


@page_route("/_checkout/{session_id}/promotion", methods=["POST"])
def promotion_endpoint(emulator: Emulator) -> Callable[[Request], Any]:
    """The promotion code's Apply button."""
    return _action(emulator, lambda ctx, session, body: completion.apply_promotion_code(
        ctx, session, str(body.get("code") or "")))


@page_route("/_checkout/{session_id}/authenticate", methods=["POST"])
def authenticate_endpoint(emulator: Emulator) -> Callable[[Request], Any]:
    """The 3-D Secure challenge's Complete / Fail buttons."""
    return _action(emulator, lambda ctx, session, body: completion.authenticate(ctx, session,
                                                                                bool(body.get("success"))))


@page_route("/_checkout/{session_id}/quantity", methods=["POST"])
def quantity_endpoint(emulator: Emulator) -> Callable[[Request], Any]:
    """A line item's quantity picker (only for ``adjustable_quantity[enabled]`` items)."""
    return _action(emulator, lambda ctx, session, body: completion.set_quantity(
        ctx, session, body.get("item"), body.get("quantity")))


@page_route("/_checkout/{session_id}/shipping", methods=["POST"])
def shipping_endpoint(emulator: Emulator) -> Callable[[Request], Any]:
    """A shipping method's radio button (one of the session's ``shipping_options``)."""
    return _action(emulator, lambda ctx, session, body: completion.set_shipping_rate(ctx, session, body.get("rate")))


@page_route("/_checkout/{session_id}/optional", methods=["POST"])
def optional_endpoint(emulator: Emulator) -> Callable[[Request], Any]:
    """An optional item's Add button."""
    return _action(emulator, lambda ctx, session, body: completion.add_optional_item(ctx, session, body.get("item")))
