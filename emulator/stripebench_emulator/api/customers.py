"""Customers: create, retrieve, update, delete, list; the customer's discount (``coupon`` / ``promotion_code`` before
2025-03-31, see ``billing_discounts``), shown as ``discount`` and removed with ``DELETE /v1/customers/{id}/discount``."""

from __future__ import annotations

from typing import Any

from stripebench_emulator.api import sources, tax_ids
from stripebench_emulator.model.context import LIST_PARAMS, RequestContext
from stripebench_emulator.model.errors import StripeError
from stripebench_emulator.model.fields import ADDRESS, SHIPPING, apply_fields, apply_metadata, deleted_stub, full_address
from stripebench_emulator.model.params import Array, Enum, Hash, Int, Metadata, Str
from stripebench_emulator.model.registry import Resource
from stripebench_emulator.model.search import SEARCH_PARAMS, search_page
from stripebench_emulator.model.versions import CUSTOMER_SOURCES_NOT_INCLUDED
from stripebench_emulator.rules import billing_discounts, billing_time, methods

resource = Resource("customer", prefix="cus", noun="customer",
                    expandable={"invoice_settings.default_payment_method": "payment_method"},
                    includable={"sources"}, render_before=CUSTOMER_SOURCES_NOT_INCLUDED, shallow_render=True,
                    render_if="_discount")

FIELDS = {
    "address": ADDRESS,
    "balance": Int(),
    "description": Str(emptyable=True),
    "email": Str(emptyable=True, max_length=512),
    "invoice_prefix": Str(emptyable=True),
    "invoice_settings": Hash({"default_payment_method": Str(emptyable=True), "footer": Str(emptyable=True),
                              "custom_fields": Array(Hash({"name": Str(required=True), "value": Str(required=True)}),
                                                     emptyable=True)}),
    "metadata": Metadata(),
    "name": Str(emptyable=True, max_length=256),
    "phone": Str(emptyable=True, max_length=20),
    "preferred_locales": Array(Str(), emptyable=True),
    "shipping": SHIPPING,
    "tax_exempt": Enum("none", "exempt", "reverse", emptyable=True),
}
PLAIN = ("balance", "description", "email", "name", "phone")
# before 2025-03-31: the customer's discount (see billing_discounts.apply_to_customer)
DISCOUNT_PARAMS = {"coupon": Str(emptyable=True), "promotion_code": Str(emptyable=True)}


@resource.renderer
def render(obj: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """``sources`` (the customer's cards) before 2020-08-27, and when expanded at any version; its ``discount``."""
    if obj.get("_discount"):
        discount = ctx.find("discount", obj["_discount"]["id"])
        obj["discount"] = ctx.render(discount) if discount is not None else None
    if not ctx.version_at_least(CUSTOMER_SOURCES_NOT_INCLUDED) or \
            any("sources" in path.split(".") for path in ctx.expand_paths):
        cards = [card for card in ctx.store.scan("card") if card.get("customer") == obj["id"]
                 and not card.get("deleted")]  # newest first, the first page of ten as Stripe embeds lists
        obj["sources"] = ctx.render({"object": "list", "data": cards[:10], "has_more": len(cards) > 10,
                                     "total_count": len(cards), "url": f"/v1/customers/{obj['id']}/sources"})
    return obj


def _apply(ctx: RequestContext, obj: dict[str, Any], params: dict[str, Any]) -> None:
    apply_fields(obj, params, PLAIN)
    if "address" in params:
        obj["address"] = full_address(params["address"])
    if "shipping" in params:
        ship = params["shipping"]
        obj["shipping"] = None if ship is None else {"address": full_address(ship["address"]), "name": ship["name"],
                                                      "phone": ship.get("phone")}
    if "invoice_prefix" in params and params["invoice_prefix"]:
        obj["invoice_prefix"] = params["invoice_prefix"].upper()
    if "invoice_settings" in params:
        settings = params["invoice_settings"]
        pm = settings.get("default_payment_method")
        if pm:
            ctx.get("payment_method", pm, param="invoice_settings[default_payment_method]")
        obj["invoice_settings"] = {**obj["invoice_settings"], **{key: settings[key] for key in (
            "default_payment_method", "footer", "custom_fields") if key in settings}}
    if "metadata" in params:
        obj["metadata"] = apply_metadata(obj.get("metadata"), params["metadata"])
    if "preferred_locales" in params:
        obj["preferred_locales"] = params["preferred_locales"] or []
    if "tax_exempt" in params:
        obj["tax_exempt"] = params["tax_exempt"] or "none"


@resource.route("POST", "/v1/customers", params={**FIELDS, **DISCOUNT_PARAMS, "payment_method": Str(),
                                                "source": Str(), "test_clock": Str(),
                                                "tax_id_data": Array(Hash(tax_ids.TAX_ID))})
def create(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create a customer; ``payment_method`` (a pm_ or magic test id) is attached, and may be the default;
    ``source`` (a card token) becomes a card and the ``default_source``; each ``tax_id_data`` entry becomes one of
    its tax IDs (``customer.tax_id.created`` after ``customer.created``)."""

    pm = methods.resolve(ctx, params["payment_method"]) if params.get("payment_method") else None
    settings = params.get("invoice_settings") or {}
    if pm is not None and settings.get("default_payment_method") == params["payment_method"]:
        settings["default_payment_method"] = pm["id"]  # pm_card_visa there means the card just attached
    clock = ctx.get("test_helpers.test_clock", params["test_clock"], param="test_clock") \
        if params.get("test_clock") else None  # a customer on a test clock lives on its frozen time
    obj: dict[str, Any] = {
        "id": ctx.new_id("cus"), "object": "customer", "address": None, "balance": 0,
        "created": clock["frozen_time"] if clock else ctx.now(),
        "currency": None, "default_source": None, "delinquent": False, "description": None, "discount": None,
        "email": None, "invoice_prefix": ctx.emulator.ids.token("invoice_prefix", 8).upper(),
        "invoice_settings": {"custom_fields": None, "default_payment_method": None, "footer": None,
                             "rendering_options": None},
        "livemode": False, "metadata": {}, "name": None, "next_invoice_sequence": 1, "phone": None,
        "preferred_locales": [], "shipping": None, "tax_exempt": "none",
        "test_clock": clock["id"] if clock else None,
    }
    default = settings.get("default_payment_method")
    if pm is not None and default == pm["id"]:
        settings.pop("default_payment_method")  # validated after the attach below
    _apply(ctx, obj, params)
    if pm is not None and default == pm["id"]:
        obj["invoice_settings"] = {**obj["invoice_settings"], "default_payment_method": pm["id"]}
    card = _card_from(ctx, obj, params)
    removed, added = _discount_from(ctx, obj, params, obj["created"])
    ctx.save(obj)
    _announce(ctx, removed, added)
    ctx.emit("customer.created", obj)
    for i, data in enumerate(params.get("tax_id_data") or ()):  # listed under the customer, each announced
        tax_ids.add(ctx, obj["id"], data["type"], data["value"], param=f"tax_id_data[{i}][value]")
    if card is not None:
        ctx.emit("customer.source.created", card)
    if pm is not None:  # a declining card fails here and the whole create rolls back
        methods.attach(ctx, pm, obj["id"], param="payment_method")
    return obj


def _card_from(ctx: RequestContext, obj: dict[str, Any], params: dict[str, Any]) -> dict[str, Any] | None:
    """The card ``params["source"]`` makes for ``obj`` (now its ``default_source``), or None when not sent; bad tokens
    and declining cards fail as on ``POST /v1/customers/{id}/sources`` (and the whole request rolls back)."""
    if not params.get("source"):
        return None

    card = sources.add_card(ctx, obj, params["source"])
    obj["default_source"] = card["id"]
    return card


@resource.route("GET", "/v1/customers/search", params=SEARCH_PARAMS)
def search(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Search customers (``email``, ``name``, ``phone``, ``created``, ``metadata['k']``)."""
    return search_page(ctx, "customer", params, "/v1/customers/search", {"email", "name", "phone", "created"})


@resource.route("GET", "/v1/customers/{id}")
def retrieve(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Retrieve a customer (a deleted one comes back as ``{"deleted": true}`` like Stripe)."""
    found = ctx.find("customer", id)
    if found is not None and found.get("deleted"):
        return deleted_stub(found)
    return ctx.get("customer", id)


@resource.route("POST", "/v1/customers/{id}", params={**FIELDS, **DISCOUNT_PARAMS,
                                                     "default_source": Str(emptyable=True), "source": Str()})
def update(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Update a customer; only sent fields change. ``source`` (a card token) replaces the default source: the new
    card becomes ``default_source`` and the old default card is deleted, as Stripe documents."""
    obj = ctx.get("customer", id)
    before = ctx.get("customer", id)
    _apply(ctx, obj, params)
    removed, added = _discount_from(ctx, obj, params, billing_time.clock_now(ctx, obj.get("test_clock")))
    if "default_source" in params:
        obj["default_source"] = params["default_source"]
    old = ctx.find("card", obj["default_source"] or "") if "source" in params else None
    card = _card_from(ctx, obj, params)
    if card is not None:
        ctx.emit("customer.source.created", card)
        if old is not None and not old.get("deleted") and old.get("customer") == obj["id"]:
            sources.remove_card(ctx, old)
    ctx.save(obj)
    _announce(ctx, removed, added)
    ctx.emit("customer.updated", obj, previous=before)
    return obj


def _discount_from(ctx: RequestContext, obj: dict[str, Any], params: dict[str, Any], now: int
                   ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    if not any(name in params for name in DISCOUNT_PARAMS):
        return [], []
    return billing_discounts.apply_to_customer(ctx, obj, params, now)


def _announce(ctx: RequestContext, removed: list[dict[str, Any]], added: list[dict[str, Any]]) -> None:
    if removed or added:
        billing_discounts.announce(ctx, removed, added)


@resource.route("DELETE", "/v1/customers/{id}")
def delete(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Delete a customer; it stays retrievable as a deleted stub."""
    obj = ctx.get("customer", id)
    ctx.save({**deleted_stub(obj), "created": obj["created"]})
    ctx.emit("customer.deleted", obj)
    return deleted_stub(obj)


@resource.route("GET", "/v1/customers", params={**LIST_PARAMS, "email": Str(max_length=512), "test_clock": Str()})
def list_customers(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """List customers, newest first; ``email`` filters exactly (case-sensitive, like Stripe)."""
    email = params.get("email")
    filtered = email is not None or "test_clock" in params  # else no filter: list_page then checks only deletion
    return ctx.list_page("customer", params, "/v1/customers",
                         where=(lambda c: (email is None or c.get("email") == email)
                                and ("test_clock" not in params or c.get("test_clock") == params["test_clock"]))
                         if filtered else None)


@resource.route("DELETE", "/v1/customers/{id}/discount")
def delete_discount(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Remove the customer's discount (``customer.discount.deleted``, then ``customer.updated``); answers the
    deleted discount."""
    customer = ctx.get("customer", id)
    entry = customer.get("_discount")
    if not entry:
        raise StripeError(f"No active discount for customer: {id}", status=404, code="resource_missing")
    before = ctx.get("customer", id)
    removed = ctx.get("discount", entry["id"])
    customer["_discount"] = None
    ctx.save(customer)
    billing_discounts.announce(ctx, [removed], [])
    ctx.emit("customer.updated", customer, previous=before)
    return billing_discounts.deleted(removed)
