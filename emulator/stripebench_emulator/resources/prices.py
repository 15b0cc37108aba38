"""Prices: one-time and recurring, ``currency_options`` (included on request), ``product_data``, lookup keys."""

from __future__ import annotations

from typing import Any

from stripebench_emulator.context import LIST_PARAMS, RequestContext
from stripebench_emulator.errors import invalid, missing_param
from stripebench_emulator.params import (AnyHash, Array, Bool, Currency, Enum, Hash, Int, Metadata, Num, Param,
                                             Str)
from stripebench_emulator.registry import Resource
from stripebench_emulator.search import SEARCH_PARAMS, search_page
from stripebench_emulator.resources.common import apply_fields, apply_metadata
from stripebench_emulator.resources.products import new_product

resource = Resource("price", prefix="price", noun="price", expandable={"product": "product"},
                    includable={"currency_options"}, shallow_render=True)

TAX_BEHAVIOR = Enum("exclusive", "inclusive", "unspecified")
CUSTOM_UNIT_AMOUNT = Hash({"enabled": Bool(required=True), "maximum": Int(min=0), "minimum": Int(min=0),
                           "preset": Int(min=0)})
CURRENCY_OPTION = Hash({"unit_amount": Int(min=0), "unit_amount_decimal": Num(min=0, as_string=True),
                        "tax_behavior": TAX_BEHAVIOR, "custom_unit_amount": CUSTOM_UNIT_AMOUNT})
RECURRING = Hash({"interval": Enum("day", "week", "month", "year", required=True), "interval_count": Int(min=1),
                  "usage_type": Enum("licensed", "metered"), "trial_period_days": Int(min=0), "meter": Str()})
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
    "unit_amount": Int(min=0),
    "unit_amount_decimal": Num(min=0, as_string=True),
}
UPDATE: dict[str, Param] = {
    "active": Bool(), "currency_options": AnyHash(CURRENCY_OPTION, emptyable=True), "lookup_key": Str(emptyable=True),
    "metadata": Metadata(), "nickname": Str(emptyable=True), "tax_behavior": TAX_BEHAVIOR,
    "transfer_lookup_key": Bool(),
}


def _amounts(values: dict[str, Any], prefix: str) -> tuple[int | None, str | None]:
    if "unit_amount" in values and "unit_amount_decimal" in values:
        raise invalid(f"You may only specify one of these parameters: {prefix}unit_amount, {prefix}unit_amount_decimal.",
                      param=f"{prefix}unit_amount")
    if "unit_amount" in values:
        return values["unit_amount"], str(values["unit_amount"])
    if "unit_amount_decimal" in values:
        decimal = values["unit_amount_decimal"]
        return (int(float(decimal)) if float(decimal).is_integer() else None), decimal
    return None, None


def _currency_options(raw: dict[str, Any], param: str) -> dict[str, Any]:
    options = {}
    for currency, option in raw.items():
        if len(currency) != 3 or not currency.isalpha():
            raise invalid(f"Invalid currency: {currency}", param=f"{param}[{currency}]")
        amount, decimal = _amounts(option, f"{param}[{currency}][")
        options[currency.lower()] = {"custom_unit_amount": option.get("custom_unit_amount"),
                                     "tax_behavior": option.get("tax_behavior", "unspecified"),
                                     "unit_amount": amount, "unit_amount_decimal": decimal}
    return options


def _claim_lookup_key(ctx: RequestContext, key: str | None, transfer: bool, own_id: str | None) -> None:
    if not key:
        return
    for stored in ctx.store.scan("price"):
        if stored["lookup_key"] == key and stored["id"] != own_id:
            other = ctx.get("price", stored["id"])
            if not transfer:
                raise invalid(f"A price (`{other['id']}`) already uses that lookup key.", param="lookup_key")
            before = dict(other)
            other["lookup_key"] = None
            ctx.save(other)
            ctx.emit("price.updated", other, previous=before)


def new_price(ctx: RequestContext, params: dict[str, Any], param: str = "") -> dict[str, Any]:
    """Create and save a price from cleaned params (also used by products and, later, ``price_data``)."""
    prefix = f"{param}[" if param else ""
    if "product" in params and "product_data" in params:
        raise invalid("You may only specify one of these parameters: product, product_data.", param="product")
    if "product" in params:
        product_id = ctx.get("product", params["product"], param=f"{param}[product]" if param else "product")["id"]
    elif "product_data" in params:
        product_id = new_product(ctx, params["product_data"])["id"]
    else:
        raise missing_param("product")
    amount, decimal = _amounts(params, prefix)
    if decimal is None and not params.get("custom_unit_amount"):
        raise missing_param(f"{param}[unit_amount]" if param else "unit_amount")
    recurring = params.get("recurring")
    currency = params["currency"]
    tax_behavior = params.get("tax_behavior", "unspecified")
    obj: dict[str, Any] = {
        # ``_id``: the id a plan created through /v1/plans chose for itself and its price
        "id": params.get("_id") or ctx.new_id("price"), "object": "price", "active": params.get("active", True),
        "billing_scheme": "per_unit", "created": ctx.now(), "currency": currency,
        "custom_unit_amount": params.get("custom_unit_amount"), "livemode": False,
        "lookup_key": params.get("lookup_key"), "metadata": apply_metadata({}, params.get("metadata") or {}),
        "nickname": params.get("nickname"), "product": product_id,
        "recurring": None if recurring is None else {
            "interval": recurring["interval"], "interval_count": recurring.get("interval_count", 1),
            "meter": recurring.get("meter"), "trial_period_days": recurring.get("trial_period_days"),
            "usage_type": recurring.get("usage_type", "licensed")},
        "tax_behavior": tax_behavior, "tiers_mode": None, "transform_quantity": None,
        "type": "recurring" if recurring else "one_time", "unit_amount": amount, "unit_amount_decimal": decimal,
        "_currency_options": {currency: {"custom_unit_amount": params.get("custom_unit_amount"),
                                         "tax_behavior": tax_behavior, "unit_amount": amount,
                                         "unit_amount_decimal": decimal}},
    }
    obj["_currency_options"].update(_currency_options(params.get("currency_options") or {}, f"{prefix}currency_options"))
    _claim_lookup_key(ctx, obj["lookup_key"], params.get("transfer_lookup_key", False), obj["id"])
    ctx.save(obj)
    ctx.emit("price.created", obj)
    return obj


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
        _claim_lookup_key(ctx, params["lookup_key"], params.get("transfer_lookup_key", False), obj["id"])
        obj["lookup_key"] = params["lookup_key"]
    if "currency_options" in params:
        own = {obj["currency"]: obj["_currency_options"][obj["currency"]]}
        obj["_currency_options"] = {**own, **_currency_options(params["currency_options"] or {}, "currency_options")}
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
