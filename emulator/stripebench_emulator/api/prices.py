"""Prices: one-time and recurring, ``currency_options`` (included on request), ``product_data``, lookup keys,
``transform_quantity`` (the billed quantity divided and rounded: ``rules.billing_cycle.billed_quantity``)."""

from __future__ import annotations

from typing import Any

from stripebench_emulator.model.context import LIST_PARAMS, RequestContext
from stripebench_emulator.model.fields import apply_fields, apply_metadata
from stripebench_emulator.model.params import AnyHash, Array, Bool, Currency, Enum, Hash, Int, Metadata, Num, Param, Str
from stripebench_emulator.model.registry import Resource
from stripebench_emulator.model.search import SEARCH_PARAMS, search_page
from stripebench_emulator.rules.catalog import claim_lookup_key, currency_options, new_price

resource = Resource("price", prefix="price", noun="price", expandable={"product": "product"},
                    includable={"currency_options"}, shallow_render=True)

TAX_BEHAVIOR = Enum("exclusive", "inclusive", "unspecified")
CUSTOM_UNIT_AMOUNT = Hash({"enabled": Bool(required=True), "maximum": Int(min=0), "minimum": Int(min=0),
                           "preset": Int(min=0)})
CURRENCY_OPTION = Hash({"unit_amount": Int(min=0), "unit_amount_decimal": Num(min=0, as_string=True),
                        "tax_behavior": TAX_BEHAVIOR, "custom_unit_amount": CUSTOM_UNIT_AMOUNT})
RECURRING = Hash({"interval": Enum("day", "week", "month", "year", required=True), "interval_count": Int(min=1),
                  "usage_type": Enum("licensed", "metered"), "trial_period_days": Int(min=0), "meter": Str()})
# Billed quantity = quantity (or metered usage) / divide_by, rounded; the line still shows the quantity.
TRANSFORM_QUANTITY = Hash({"divide_by": Int(min=1, required=True), "round": Enum("up", "down", required=True)})
CREATE: dict[str, Param] = {
    "currency": Currency(required=True),
    "active": Bool(),
    "billing_scheme": Enum("per_unit"),
    "currency_options": AnyHash(CURRENCY_OPTION),
    "custom_unit_amount": CUSTOM_UNIT_AMOUNT,
    "lookup_key": Str(max_length=200),
    "metadata": Metadata(),
    "nickname": Str(),
    "product": Str(),
    "product_data": Hash({"name": Str(required=True), "active": Bool(), "id": Str(), "metadata": Metadata(),
                          "statement_descriptor": Str(max_length=22), "tax_code": Str(), "unit_label": Str()}),
    "recurring": RECURRING,
    "tax_behavior": TAX_BEHAVIOR,
    "transfer_lookup_key": Bool(),
    "transform_quantity": TRANSFORM_QUANTITY,
    "unit_amount": Int(min=0),
    "unit_amount_decimal": Num(min=0, as_string=True),
}
UPDATE: dict[str, Param] = {
    "active": Bool(), "currency_options": AnyHash(CURRENCY_OPTION, emptyable=True), "lookup_key": Str(emptyable=True),
    "metadata": Metadata(), "nickname": Str(emptyable=True), "tax_behavior": TAX_BEHAVIOR,
    "transfer_lookup_key": Bool(),
}


@resource.renderer
def render(obj: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """``currency_options`` appears only when the caller expands it (as on Stripe)."""
    if any(path.split(".")[-1] == "currency_options" for path in ctx.expand_paths):
        obj["currency_options"] = obj["_currency_options"]
    return obj


@resource.route("POST", "/v1/prices", params=CREATE)
def create(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create a price for ``product`` or a new product from ``product_data``."""
    return new_price(ctx, params)


@resource.route("GET", "/v1/prices/search", params=SEARCH_PARAMS)
def search(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Search prices (``active``, ``currency``, ``lookup_key``, ``product``, ``type``, ``created``, metadata)."""
    return search_page(ctx, "price", params, "/v1/prices/search", {"active", "currency", "lookup_key", "product",
                                                                    "type", "created"})


@resource.route("GET", "/v1/prices/{id}")
def retrieve(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Retrieve a price."""
    return ctx.get("price", id)


@resource.route("POST", "/v1/prices/{id}", params=UPDATE)
def update(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Update a price's mutable fields (amounts are immutable on Stripe)."""
    obj = ctx.get("price", id)
    before = ctx.get("price", id)
    apply_fields(obj, params, ("active", "nickname", "tax_behavior"))
    if "metadata" in params:
        obj["metadata"] = apply_metadata(obj["metadata"], params["metadata"])
    if "lookup_key" in params:
        claim_lookup_key(ctx, params["lookup_key"], params.get("transfer_lookup_key", False), obj["id"])
        obj["lookup_key"] = params["lookup_key"]
    if "currency_options" in params:
        own = {obj["currency"]: obj["_currency_options"][obj["currency"]]}
        obj["_currency_options"] = {**own, **currency_options(params["currency_options"] or {}, "currency_options")}
    ctx.save(obj)
    ctx.emit("price.updated", obj, previous=before)
    return obj


@resource.route("GET", "/v1/prices", params={
    **LIST_PARAMS, "active": Bool(), "currency": Currency(), "product": Str(), "type": Enum("one_time", "recurring"),
    "lookup_keys": Array(Str(), max_items=10),
    "recurring": Hash({"interval": Enum("day", "week", "month", "year"), "usage_type": Enum("licensed", "metered"),
                       "meter": Str()})})
def list_prices(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """List prices with ``active``, ``currency``, ``product``, ``type``, ``lookup_keys``, ``recurring`` filters."""
    recurring = params.get("recurring") or {}

    def keep(p: dict[str, Any]) -> bool:
        return all((
            "active" not in params or p["active"] == params["active"],
            "currency" not in params or p["currency"] == params["currency"],
            "product" not in params or p["product"] == params["product"],
            "type" not in params or p["type"] == params["type"],
            "lookup_keys" not in params or p["lookup_key"] in params["lookup_keys"],
            not recurring or (p["recurring"] is not None
                              and all(p["recurring"].get(k) == v for k, v in recurring.items())),
        ))

    return ctx.list_page("price", params, "/v1/prices", where=keep)
