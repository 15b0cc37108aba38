"""Shipping rates (fixed amount): create, retrieve, update, list; Checkout's ``shipping_options`` use them."""

from __future__ import annotations

from typing import Any

from stripebench_emulator.model.context import LIST_PARAMS, RequestContext
from stripebench_emulator.model.errors import missing_param
from stripebench_emulator.model.fields import apply_metadata
from stripebench_emulator.model.params import AnyHash, Bool, Currency, Enum, Hash, Int, Metadata, Str
from stripebench_emulator.model.registry import Resource

resource = Resource("shipping_rate", prefix="shr", noun="shipping rate")

_ESTIMATE_END = Hash({"unit": Enum("business_day", "day", "hour", "month", "week", required=True),
                      "value": Int(min=1, required=True)})
CREATE = {
    "display_name": Str(required=True, max_length=100),
    "type": Enum("fixed_amount"),
    "fixed_amount": Hash({"amount": Int(min=0, required=True), "currency": Currency(required=True),
                          "currency_options": AnyHash(Hash({"amount": Int(min=0, required=True),
                                                            "tax_behavior": Enum("exclusive", "inclusive",
                                                                                 "unspecified")}))}),
    "delivery_estimate": Hash({"maximum": _ESTIMATE_END, "minimum": _ESTIMATE_END}),
    "metadata": Metadata(),
    "tax_behavior": Enum("exclusive", "inclusive", "unspecified"),
    "tax_code": Str(),
}


def new_shipping_rate(ctx: RequestContext, params: dict[str, Any], param: str = "") -> dict[str, Any]:
    """Create and save a fixed-amount shipping rate (also used for Checkout's ``shipping_rate_data``)."""
    if "fixed_amount" not in params:
        raise missing_param(f"{param}[fixed_amount]" if param else "fixed_amount")
    fixed = params["fixed_amount"]
    obj = {
        "id": ctx.new_id("shr"), "object": "shipping_rate", "active": True, "created": ctx.now(),
        "delivery_estimate": params.get("delivery_estimate"), "display_name": params["display_name"],
        "fixed_amount": {"amount": fixed["amount"], "currency": fixed["currency"],
                         **({"currency_options": fixed["currency_options"]} if fixed.get("currency_options") else {})},
        "livemode": False, "metadata": apply_metadata({}, params.get("metadata") or {}),
        "tax_behavior": params.get("tax_behavior", "unspecified"), "tax_code": params.get("tax_code"),
        "type": "fixed_amount",
    }
    ctx.save(obj)
    return obj


@resource.route("POST", "/v1/shipping_rates", params=CREATE)
def create(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create a shipping rate."""
    return new_shipping_rate(ctx, params)


@resource.route("GET", "/v1/shipping_rates/{id}")
def retrieve(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Retrieve a shipping rate."""
    return ctx.get("shipping_rate", id, param="shipping_rate_token")


@resource.route("POST", "/v1/shipping_rates/{id}", params={"active": Bool(), "metadata": Metadata(),
                                                          "tax_behavior": Enum("exclusive", "inclusive",
                                                                               "unspecified")})
def update(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Update ``active``, ``metadata`` or ``tax_behavior``."""
    obj = ctx.get("shipping_rate", id, param="shipping_rate_token")
    for name in ("active", "tax_behavior"):
        if name in params:
            obj[name] = params[name]
    if "metadata" in params:
        obj["metadata"] = apply_metadata(obj["metadata"], params["metadata"])
    return ctx.save(obj)


@resource.route("GET", "/v1/shipping_rates", params={**LIST_PARAMS, "active": Bool(), "currency": Currency()})
def list_shipping_rates(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """List shipping rates with ``active`` and ``currency`` filters."""
    def keep(rate: dict[str, Any]) -> bool:
        return ("active" not in params or rate["active"] == params["active"]) and (
            "currency" not in params or rate["fixed_amount"]["currency"] == params["currency"])

    return ctx.list_page("shipping_rate", params, "/v1/shipping_rates", where=keep)
