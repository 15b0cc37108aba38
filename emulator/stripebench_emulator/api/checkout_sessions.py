"""Checkout Sessions: create (payment / setup / subscription; hosted or embedded), retrieve, list, expire, line items.

Stored canonically with ``_ui`` = ``hosted`` or ``embedded``; the renderer names it ``hosted``/``embedded`` before
2026-03-25 and ``hosted_page``/``embedded_page`` from then on, and create accepts only the request version's names.
Line items live inside the session (``_items``, rendered as ``item`` objects); totals and discounts are computed in
``checkout_totals``. Completing a session is the browser pages' job (``checkout_completion``).
"""

from __future__ import annotations

from typing import Any

from stripebench_emulator.api import checkout_options as options
from stripebench_emulator.api.payment_intents import Loose
from stripebench_emulator.api.shipping_rates import CREATE as SHIPPING_RATE_DATA
from stripebench_emulator.api.shipping_rates import new_shipping_rate
from stripebench_emulator.model.context import LIST_PARAMS, RequestContext
from stripebench_emulator.model.errors import StripeError, invalid, missing_param
from stripebench_emulator.model.fields import apply_metadata
from stripebench_emulator.model.params import Array, Bool, Currency, Enum, Hash, Int, Metadata, Num, Str
from stripebench_emulator.model.registry import Resource
from stripebench_emulator.model.versions import CHECKOUT_UI_MODE_PAGE_NAMES
from stripebench_emulator.rules import checkout_totals as totals
from stripebench_emulator.rules.billing_time import period_end
from stripebench_emulator.rules.catalog import new_price

resource = Resource("checkout.session", prefix="cs", noun="checkout.session",
                    expandable={"customer": "customer", "payment_intent": "payment_intent",
                                "shipping_cost.shipping_rate": "shipping_rate",
                                "setup_intent": "setup_intent", "subscription": "subscription", "invoice": "invoice",
                                "discounts.coupon": "coupon", "discounts.promotion_code": "promotion_code"},
                    includable={"line_items"})
item_resource = Resource("item", prefix="li", noun="line item", expandable={"price.product": "product"},
                         includable={"discounts"})

OLD_UI, NEW_UI = ("hosted", "embedded", "custom"), ("hosted_page", "embedded_page", "elements")
DAY = 24 * 3600

PRICE_DATA = Hash({
    "currency": Currency(required=True), "product": Str(),
    "product_data": Hash({"name": Str(required=True), "description": Str(), "images": Array(Str(), max_items=8),
                          "metadata": Metadata(), "tax_code": Str(), "unit_label": Str()}),
    "recurring": Hash({"interval": Enum("day", "week", "month", "year", required=True), "interval_count": Int(min=1)}),
    "tax_behavior": Enum("exclusive", "inclusive", "unspecified"),
    "unit_amount": Int(min=0), "unit_amount_decimal": Num(min=0, as_string=True),
})
LINE_ITEM = Hash({
    "price": Str(), "price_data": PRICE_DATA, "quantity": Int(min=0, max=999999),
    "adjustable_quantity": Hash({"enabled": Bool(required=True), "maximum": Int(min=1), "minimum": Int(min=0)}),
    "tax_rates": Array(Str()), "dynamic_tax_rates": Array(Str()), "metadata": Metadata(),
})
ADDRESS_PARAM = Hash({k: Str() for k in ("city", "country", "line1", "line2", "postal_code", "state")})
CREATE = {
    "mode": Enum("payment", "setup", "subscription"),
    "ui_mode": Str(),
    "line_items": Array(LINE_ITEM, max_items=100),
    "allow_promotion_codes": Bool(),
    "discounts": Array(Hash({"coupon": Str(), "promotion_code": Str()}), max_items=1),
    "customer": Str(), "customer_email": Str(max_length=800), "customer_creation": Enum("always", "if_required"),
    "customer_update": Hash({"address": Enum("auto", "never"), "name": Enum("auto", "never"),
                             "shipping": Enum("auto", "never")}),
    "billing_address_collection": Enum("auto", "required"),
    "shipping_address_collection": Hash({"allowed_countries": Array(Str(max_length=2), required=True)}),
    "phone_number_collection": Hash({"enabled": Bool(required=True)}),
    "success_url": Str(), "cancel_url": Str(), "return_url": Str(),
    "redirect_on_completion": Enum("always", "if_required", "never"),
    "client_reference_id": Str(max_length=200),
    "currency": Currency(), "locale": Str(), "expires_at": Int(),
    "payment_method_types": Array(Str()), "submit_type": Enum("auto", "book", "donate", "pay", "subscribe"),
    "metadata": Metadata(),
    "payment_intent_data": Hash({"metadata": Metadata(), "description": Str(), "capture_method": Enum(
        "automatic", "automatic_async", "manual"), "receipt_email": Str(), "setup_future_usage": Enum(
        "off_session", "on_session"), "statement_descriptor": Str(max_length=22),
        "statement_descriptor_suffix": Str(max_length=22), "shipping": Hash({"address": ADDRESS_PARAM,
                                                                              "name": Str()})}),
    "subscription_data": Hash({"metadata": Metadata(), "description": Str(), "default_tax_rates": Array(Str()),
                               **options.SUBSCRIPTION_EXTRAS}),
    "setup_intent_data": Hash({"metadata": Metadata(), "description": Str()}),
    "shipping_options": Array(Hash({"shipping_rate": Str(), "shipping_rate_data": Hash(SHIPPING_RATE_DATA)}),
                              max_items=5),
    # Accepted and shown on the session; the emulator computes no tax and shows no extra fields for them.
    "automatic_tax": Hash({"enabled": Bool(required=True), "liability": Loose()}),
    "invoice_creation": Hash({"enabled": Bool(required=True), "invoice_data": Loose()}),
    "payment_method_collection": Enum("always", "if_required"),
    "tax_id_collection": Hash({"enabled": Bool(required=True), "required": Enum("if_supported", "never")}),
    "consent_collection": options.CONSENT_COLLECTION, "custom_fields": options.CUSTOM_FIELDS,
    "custom_text": options.CUSTOM_TEXT, "optional_items": options.OPTIONAL_ITEMS, "payment_method_options": Loose(),
    "payment_method_configuration": Str(), "saved_payment_method_options": Loose(), "after_expiration": Loose(),
    "adaptive_pricing": Hash({"enabled": Bool()}), "branding_settings": Loose(), "wallet_options": Loose(),
}


def ui_names(ctx: RequestContext) -> tuple[str, ...]:
    """The ``ui_mode`` values this request's API version accepts."""
    return NEW_UI if ctx.version_at_least(CHECKOUT_UI_MODE_PAGE_NAMES) else OLD_UI


@resource.renderer
def render(obj: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """Name ``ui_mode`` for the caller's version; ``line_items`` only when expanded."""
    obj["ui_mode"] = dict(zip(OLD_UI, ui_names(ctx), strict=True))[obj["_ui"]]
    if any(path.split(".")[0] == "line_items" or ".line_items" in path for path in ctx.expand_paths):
        obj["line_items"] = ctx.render(totals.items_page(obj, ctx, f"/v1/checkout/sessions/{obj['id']}/line_items",
                                                         {}))
    return obj


@item_resource.renderer
def render_item(obj: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """Embed the price as Stripe does; per-discount amounts appear only when ``discounts`` is expanded."""
    price = ctx.find("price", obj["price"])
    obj["price"] = ctx.render(price) if price else None
    if any(path.endswith("data.discounts") for path in ctx.expand_paths):
        obj["discounts"] = obj["_discounts"]
    return obj


def _ui_mode(ctx: RequestContext, params: dict[str, Any]) -> str:
    names = ui_names(ctx)
    value = params.get("ui_mode", names[0])
    if value not in names:
        options = ", ".join(sorted(names)[:-1]) + f", or {sorted(names)[-1]}"
        raise invalid(f"Invalid ui_mode: must be one of {options}", param="ui_mode")
    canonical = OLD_UI[names.index(value)]
    if canonical == "custom":
        raise invalid(f"The emulator does not serve ui_mode={value} (Elements with Checkout Sessions); use "
                      f"{names[0]} or {names[1]}.", param="ui_mode")
    return canonical


def _check_urls(params: dict[str, Any], ui: str, ui_name: str) -> str:
    if ui == "hosted":
        for name in ("return_url", "redirect_on_completion"):
            if name in params:
                raise invalid(f"`{name}` can only be used when `ui_mode` is `embedded`"
                              f"{'_page' if ui_name.endswith('_page') else ''}.", param=name)
        if not params.get("success_url"):  # required for hosted pages on every version (where to send the buyer)
            raise missing_param("success_url")
        return "always"
    for name in ("success_url", "cancel_url"):
        if name in params:
            raise invalid(f"`{name}` is not allowed when `ui_mode` is `{ui_name}`. Use `return_url` instead.",
                          param=name)
    redirect = params.get("redirect_on_completion", "always")
    if redirect == "never" and "return_url" in params:
        raise invalid("`return_url` cannot be set when `redirect_on_completion` is `never`.", param="return_url")
    if redirect != "never" and not params.get("return_url"):
        raise missing_param("return_url")
    return redirect


def new_item(ctx: RequestContext, price: dict[str, Any], quantity: int, adjustable: dict[str, Any] | None,
             metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """A session line item (``item``) for ``price``; amounts are filled in by ``checkout_totals.recompute``."""
    product = ctx.find("product", price["product"]) or {}
    return {
        "id": ctx.new_id("li"), "object": "item", "adjustable_quantity": None if adjustable is None else {
            "enabled": adjustable["enabled"], "maximum": adjustable.get("maximum"),
            "minimum": adjustable.get("minimum")},
        "currency": price["currency"], "description": product.get("name"), "metadata": metadata or {},
        "price": price["id"], "quantity": quantity,
        "amount_discount": 0, "amount_subtotal": 0, "amount_tax": 0, "amount_total": 0, "_discounts": [],
        "_unit_amount": price["unit_amount"] or 0, "_recurring": price["recurring"], "_product": price["product"],
    }


def _line_items(ctx: RequestContext, params: dict[str, Any], mode: str) -> list[dict[str, Any]]:
    raw = params.get("line_items") or []
    if mode == "setup":
        if raw:
            raise invalid("You cannot pass `line_items` in `setup` mode.", param="line_items")
        return []
    if not raw:
        raise missing_param("line_items")
    items = []
    for i, line in enumerate(raw):
        name = f"line_items[{i}]"
        if "price" in line and "price_data" in line:
            raise invalid(f"You may only specify one of these parameters: {name}[price], {name}[price_data].",
                          param=f"{name}[price]")
        if "price" in line:
            price = ctx.get("price", line["price"], param=f"{name}[price]")
            if not price["active"]:
                raise invalid("The price specified is inactive. This field only accepts active prices.",
                              param=f"{name}[price]")
        elif "price_data" in line:
            data = dict(line["price_data"])
            if "product" not in data and "product_data" not in data:
                raise missing_param(f"{name}[price_data][product_data]")
            if "unit_amount" not in data and "unit_amount_decimal" not in data:
                raise missing_param(f"{name}[price_data][unit_amount]")
            if mode == "payment" and "recurring" in data:
                raise invalid("You specified `payment` mode but passed a recurring price. Either switch to "
                              "`subscription` mode or use only one-time prices.", param=f"{name}[price_data][recurring]")
            price = new_price(ctx, data, param=f"{name}[price_data]")
            price["active"] = False  # inline prices are archived: they belong to this session only
            ctx.save(price)
        else:
            raise invalid(f"You must specify either `price` or `price_data` in {name}.", param=name)
        if "quantity" not in line:
            raise invalid(f"Quantity is required. Add `quantity` to `{name}`", param=f"{name}[quantity]",
                          code="parameter_missing")
        if mode == "payment" and price["type"] == "recurring":
            raise invalid("You specified `payment` mode but passed a recurring price. Either switch to "
                          "`subscription` mode or use only one-time prices.", param=f"{name}[price]")
        items.append(new_item(ctx, price, line["quantity"], line.get("adjustable_quantity"), line.get("metadata")))
    currencies = {item["currency"] for item in items}
    if len(currencies) > 1:
        raise invalid("All line items must use the same currency; got " + ", ".join(sorted(currencies)) + ".",
                      param="line_items")
    if mode == "subscription" and not any(item["_recurring"] for item in items):
        raise invalid("You must provide at least one recurring price in `subscription` mode when using prices.",
                      param="line_items")
    return items


@resource.route("POST", "/v1/checkout/sessions", params=CREATE)
def create(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create a Checkout Session; hosted ones get a ``url`` on this emulator, embedded ones a ``client_secret``."""
    if "mode" not in params:
        raise missing_param("mode")
    mode = params["mode"]
    ui = _ui_mode(ctx, params)
    ui_name = params.get("ui_mode", ui_names(ctx)[0])
    redirect = _check_urls(params, ui, ui_name)
    if params.get("allow_promotion_codes") and params.get("discounts"):
        raise invalid("You may only specify one of these parameters: allow_promotion_codes, discounts.",
                      param="allow_promotion_codes")
    if params.get("customer") and params.get("customer_email"):
        raise invalid("You may only specify one of these parameters: customer, customer_email.", param="customer")
    if "customer_creation" in params and mode != "payment":
        raise invalid("`customer_creation` can only be used in `payment` mode.", param="customer_creation")
    if "payment_intent_data" in params and mode != "payment":
        raise invalid("You can only specify `payment_intent_data` in `payment` mode.", param="payment_intent_data")
    if "subscription_data" in params and mode != "subscription":
        raise invalid("You can only specify `subscription_data` in `subscription` mode.", param="subscription_data")
    if mode == "setup" and not params.get("currency") and not params.get("payment_method_types"):
        raise missing_param("currency")
    customer = ctx.get("customer", params["customer"], param="customer") if params.get("customer") else None
    now = ctx.now()
    expires_at = params.get("expires_at", now + DAY)
    if expires_at > now + DAY:
        raise invalid("The `expires_at` timestamp must be less than 24 hours from Checkout Session creation.",
                      param="expires_at")
    if expires_at < now + 30 * 60:
        raise invalid("The `expires_at` timestamp must be at least 30 minutes from Checkout Session creation.",
                      param="expires_at")
    items = _line_items(ctx, params, mode)
    options.check_submit_type(params, mode)
    terms = options.subscription_terms(ctx, params)
    currency = items[0]["currency"] if items else params.get("currency")
    # Stripe's ids are cs_test_a1 + 56 characters; two tokens, since one seeded token carries ~43 characters.
    session_id = "cs_test_a1" + ctx.emulator.ids.token("cs_test", 40) + ctx.emulator.ids.token("cs_test", 16)
    obj: dict[str, Any] = {
        "id": session_id, "object": "checkout.session", "adaptive_pricing": None, "after_expiration": None,
        "allow_promotion_codes": params.get("allow_promotion_codes"), "amount_subtotal": None, "amount_total": None,
        "automatic_tax": {"enabled": False, "liability": None, "provider": None, "status": None},
        "billing_address_collection": params.get("billing_address_collection"),
        "cancel_url": params.get("cancel_url"), "client_reference_id": params.get("client_reference_id"),
        "client_secret": None, "collected_information": None, "consent": None,
        "consent_collection": options.consent_collection(params),
        "created": now, "currency": currency, "currency_conversion": None,
        "custom_fields": options.custom_fields(params), "optional_items": options.optional_items(ctx, params, mode),
        "custom_text": options.custom_text(params),
        "customer": customer["id"] if customer else None, "customer_account": None,
        "customer_creation": params.get("customer_creation", "if_required") if mode == "payment" else None,
        "customer_details": {"address": None, "email": customer.get("email"), "name": None, "phone": None,
                             "tax_exempt": "none", "tax_ids": None} if customer else None,
        "customer_email": params.get("customer_email"), "discounts": [], "expires_at": expires_at,
        "invoice": None, "invoice_creation": {"enabled": False, "invoice_data": {
            "account_tax_ids": None, "custom_fields": None, "description": None, "footer": None, "issuer": None,
            "metadata": {}, "rendering_options": None}} if mode == "payment" else None,
        "livemode": False, "locale": params.get("locale"),
        "metadata": apply_metadata({}, params.get("metadata") or {}), "mode": mode, "origin_context": None,
        "payment_intent": None, "payment_link": None,
        "payment_method_collection": "always" if mode in ("subscription", "setup") else None,
        "payment_method_configuration_details": None, "payment_method_options": {},
        "payment_method_types": params.get("payment_method_types") or ["card"],
        "payment_status": "no_payment_required" if mode == "setup" else "unpaid", "permissions": None,
        "phone_number_collection": {"enabled": (params.get("phone_number_collection") or {}).get("enabled", False)},
        "tax_id_collection": {"enabled": False, "required": "never"},
        "recovered_from": None, "saved_payment_method_options": None,
        "setup_intent": None,
        "shipping_address_collection": params.get("shipping_address_collection"), "shipping_cost": None,
        "shipping_options": [], "status": "open", "submit_type": params.get("submit_type"),
        "subscription": None, "success_url": params.get("success_url"),
        "total_details": None, "ui_mode": None, "url": None, "wallet_options": None,
        "_ui": ui, "_items": items,
        "_payment_intent_data": params.get("payment_intent_data") or {},
        "_subscription_data": params.get("subscription_data") or {}, "_terms": terms,
        "_recurring_share": _recurring_share(terms, items, now),
        "_setup_intent_data": params.get("setup_intent_data") or {},
    }
    if ui == "hosted":
        obj["url"] = f"{ctx.base_url}/c/pay/{session_id}"
    else:
        obj["client_secret"] = f"{session_id}_secret_{ctx.emulator.ids.token('cs_secret', 24)}"
        obj["redirect_on_completion"] = redirect
        obj["return_url"] = params.get("return_url")
    _optional_settings(obj, params, mode)
    _shipping_options(ctx, obj, params.get("shipping_options") or [], mode)
    if params.get("discounts"):
        totals.attach_discount(ctx, obj, params["discounts"][0], param="discounts[0]")
    totals.recompute(ctx, obj)
    ctx.save(obj)
    return obj


def _recurring_share(terms: dict[str, Any], items: list[dict[str, Any]], now: int) -> float:
    recurring = next((item["_recurring"] for item in items if item["_recurring"]), None)
    if recurring is None:
        return 1.0
    end = period_end(now, recurring["interval"], recurring.get("interval_count") or 1)
    return options.recurring_share(terms, now, end)


def _optional_settings(obj: dict[str, Any], params: dict[str, Any], mode: str) -> None:
    """Reflect settings the emulator accepts without acting on them (tax, invoices, consent, custom text)."""
    if "automatic_tax" in params:
        obj["automatic_tax"]["enabled"] = params["automatic_tax"]["enabled"]
        obj["automatic_tax"]["status"] = "complete" if params["automatic_tax"]["enabled"] else None
    if "invoice_creation" in params:
        if mode != "payment":
            raise invalid("`invoice_creation` can only be used in `payment` mode.", param="invoice_creation")
        obj["invoice_creation"]["enabled"] = params["invoice_creation"]["enabled"]
        if isinstance(params["invoice_creation"].get("invoice_data"), dict):
            obj["invoice_creation"]["invoice_data"].update(params["invoice_creation"]["invoice_data"])
    if "payment_method_collection" in params:
        if mode == "payment":
            raise invalid("`payment_method_collection` can only be used in `setup` and `subscription` mode.",
                          param="payment_method_collection")
        obj["payment_method_collection"] = params["payment_method_collection"]
    if "tax_id_collection" in params:
        obj["tax_id_collection"] = {"enabled": params["tax_id_collection"]["enabled"],
                                    "required": params["tax_id_collection"].get("required", "never")}
    if isinstance(params.get("payment_method_options"), dict):
        obj["payment_method_options"] = params["payment_method_options"]


def _shipping_options(ctx: RequestContext, obj: dict[str, Any], options: list[dict[str, Any]], mode: str) -> None:
    """Fixed-amount shipping rates; the first one is selected and its amount is added to the total."""
    if options and mode != "payment":
        raise invalid("`shipping_options` can only be used in `payment` mode.", param="shipping_options")
    for i, option in enumerate(options):
        name = f"shipping_options[{i}]"
        if ("shipping_rate" in option) == ("shipping_rate_data" in option):
            raise invalid(f"You must specify exactly one of {name}[shipping_rate] or {name}[shipping_rate_data].",
                          param=name)
        rate = (ctx.get("shipping_rate", option["shipping_rate"], param=f"{name}[shipping_rate]")
                if "shipping_rate" in option else
                new_shipping_rate(ctx, option["shipping_rate_data"], param=f"{name}[shipping_rate_data]"))
        if rate["fixed_amount"]["currency"] != obj["currency"]:
            raise invalid(f"The shipping rate's currency ({rate['fixed_amount']['currency']}) must match the "
                          f"Checkout Session's currency ({obj['currency']}).", param=name)
        obj["shipping_options"].append({"shipping_amount": rate["fixed_amount"]["amount"], "shipping_rate": rate["id"]})
    if obj["shipping_options"]:
        first = obj["shipping_options"][0]
        obj["shipping_cost"] = {"amount_subtotal": first["shipping_amount"], "amount_tax": 0,
                                "amount_total": first["shipping_amount"], "shipping_rate": first["shipping_rate"]}


@resource.route("GET", "/v1/checkout/sessions", params={
    **LIST_PARAMS, "customer": Str(), "payment_intent": Str(), "subscription": Str(), "payment_link": Str(),
    "status": Enum("complete", "expired", "open"), "customer_details": Hash({"email": Str(required=True)})})
def list_sessions(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """List sessions with ``customer``, ``payment_intent``, ``subscription``, ``status`` filters."""
    expire_due(ctx)
    email = (params.get("customer_details") or {}).get("email")

    def keep(s: dict[str, Any]) -> bool:
        return all((
            all(name not in params or s.get(name) == params[name]
                for name in ("customer", "payment_intent", "subscription", "status", "payment_link")),
            email is None or (s.get("customer_details") or {}).get("email") == email,
        ))

    return ctx.list_page("checkout.session", params, "/v1/checkout/sessions", where=keep)


@resource.route("GET", "/v1/checkout/sessions/{id}")
def retrieve(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Retrieve a session (an open one past ``expires_at`` has expired)."""
    session = ctx.get("checkout.session", id, param="session")
    return expire_if_due(ctx, session)


@resource.route("GET", "/v1/checkout/sessions/{id}/line_items", params=LIST_PARAMS)
def list_line_items(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """The session's line items (``item`` objects with amounts; ``data.price.product`` expandable)."""
    session = ctx.get("checkout.session", id, param="session")
    return totals.items_page(session, ctx, f"/v1/checkout/sessions/{id}/line_items", params)


@resource.route("POST", "/v1/checkout/sessions/{id}", params={"metadata": Metadata()})
def update(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Update a session's metadata."""
    session = ctx.get("checkout.session", id, param="session")
    if "metadata" in params:
        session["metadata"] = apply_metadata(session["metadata"], params["metadata"])
    return ctx.save(session)


@resource.route("POST", "/v1/checkout/sessions/{id}/expire")
def expire(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Expire an open session now; anything else is Stripe's error."""
    session = expire_if_due(ctx, ctx.get("checkout.session", id, param="session"))
    if session["status"] != "open":
        raise StripeError(f"Only Checkout Sessions with a status in [\"open\"] can be expired. This Checkout "
                          f"Session has a status of \"{session['status']}\".", param="session")
    return _expire(ctx, session)


def _expire(ctx: RequestContext, session: dict[str, Any]) -> dict[str, Any]:
    session["status"] = "expired"
    session["url"] = None
    session["client_secret"] = None if session["_ui"] == "hosted" else session["client_secret"]
    ctx.save(session)
    ctx.emit("checkout.session.expired", session)
    return session


def expire_if_due(ctx: RequestContext, session: dict[str, Any]) -> dict[str, Any]:
    """Expire an open session whose ``expires_at`` has passed on the emulator clock."""
    if session["status"] == "open" and session["expires_at"] <= ctx.now():
        return _expire(ctx, session)
    return session


def expire_due(ctx: RequestContext) -> None:
    """Expire every open session past its ``expires_at`` (before listing)."""
    now = ctx.now()
    for stored in ctx.store.scan("checkout.session"):
        if stored["status"] == "open" and stored["expires_at"] <= now:
            _expire(ctx, ctx.get("checkout.session", stored["id"]))
