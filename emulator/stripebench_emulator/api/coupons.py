"""Coupons: percent or amount off, duration; create, retrieve, update, delete, list."""

from __future__ import annotations

from typing import Any

from stripebench_emulator.model.context import LIST_PARAMS, RequestContext
from stripebench_emulator.model.errors import invalid, missing_param
from stripebench_emulator.model.fields import apply_metadata, deleted_stub
from stripebench_emulator.model.params import AnyHash, Array, Currency, Enum, Hash, Int, Metadata, Num, Str
from stripebench_emulator.model.registry import Resource
from stripebench_emulator.rules import redemption

resource = Resource("coupon", noun="coupon", includable={"applies_to", "currency_options"}, shallow_render=True)

CURRENCY_OPTIONS = AnyHash(Hash({"amount_off": Int(min=1, required=True)}))
CREATE = {
    "id": Str(max_length=200),
    "amount_off": Int(min=1),
    "currency": Currency(),
    "currency_options": CURRENCY_OPTIONS,
    "percent_off": Num(min=0, max=100),
    "duration": Enum("forever", "once", "repeating"),
    "duration_in_months": Int(min=1),
    "max_redemptions": Int(min=1),
    "metadata": Metadata(),
    "name": Str(max_length=40),
    "redeem_by": Int(),
    "applies_to": Hash({"products": Array(Str())}),
}


@resource.route("POST", "/v1/coupons", params=CREATE)
def create(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create a coupon; exactly one of ``percent_off`` and ``amount_off`` (which needs ``currency``)."""
    if ("percent_off" in params) == ("amount_off" in params):
        raise invalid("You must pass exactly one of percent_off or amount_off.",
                      param="percent_off" if "percent_off" not in params else "amount_off")
    if "percent_off" in params and not 0 < params["percent_off"] <= 100:
        raise invalid("percent_off must be greater than 0 and at most 100.", param="percent_off")
    if "amount_off" in params and "currency" not in params:
        raise missing_param("currency")
    duration = params.get("duration", "once")
    if duration == "repeating" and "duration_in_months" not in params:
        raise missing_param("duration_in_months")
    if duration != "repeating" and "duration_in_months" in params:
        raise invalid("duration_in_months can only be set when duration is repeating.", param="duration_in_months")
    if "redeem_by" in params and params["redeem_by"] <= ctx.now():
        raise invalid("Invalid redeem_by: must be in the future", param="redeem_by")
    coupon_id = params.get("id") or ctx.emulator.ids.token("coupon", 8)
    if ctx.find("coupon", coupon_id) is not None:
        raise invalid("Coupon already exists.", param="id", code="resource_already_exists")
    for product in (params.get("applies_to") or {}).get("products", []):
        ctx.get("product", product, param="applies_to[products]")
    obj: dict[str, Any] = {
        "id": coupon_id, "object": "coupon", "amount_off": params.get("amount_off"), "created": ctx.now(),
        "currency": params.get("currency"), "duration": duration,
        "duration_in_months": params.get("duration_in_months"), "livemode": False,
        "max_redemptions": params.get("max_redemptions"), "metadata": apply_metadata({}, params.get("metadata") or {}),
        "name": params.get("name"), "percent_off": params.get("percent_off"), "redeem_by": params.get("redeem_by"),
        "times_redeemed": 0, "valid": True,
        "_applies_to": params.get("applies_to"),
        "_currency_options": {c: {"amount_off": o["amount_off"]} for c, o in (params.get("currency_options") or {}).items()},
    }
    ctx.save(obj)
    ctx.emit("coupon.created", obj)
    return obj


@resource.renderer
def render(obj: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """``applies_to`` and ``currency_options`` are included only when expanded."""
    obj["valid"] = redemption.coupon_valid(obj, ctx.now())  # past redeem_by or at max_redemptions: false
    wanted = {path.split(".")[-1] for path in ctx.expand_paths}
    if "applies_to" in wanted:
        obj["applies_to"] = obj.get("_applies_to") or {"products": []}
    if "currency_options" in wanted:
        obj["currency_options"] = obj.get("_currency_options") or {}
    return obj


@resource.route("GET", "/v1/coupons/{id}")
def retrieve(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Retrieve a coupon."""
    return ctx.get("coupon", id)


@resource.route("POST", "/v1/coupons/{id}", params={"metadata": Metadata(), "name": Str(emptyable=True, max_length=40),
                                                    "currency_options": CURRENCY_OPTIONS})
def update(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Update a coupon's name, metadata or currency options (the discount itself is immutable)."""
    obj = ctx.get("coupon", id)
    before = ctx.get("coupon", id)
    if "name" in params:
        obj["name"] = params["name"]
    if "metadata" in params:
        obj["metadata"] = apply_metadata(obj["metadata"], params["metadata"])
    if "currency_options" in params:
        added = {c: {"amount_off": o["amount_off"]} for c, o in params["currency_options"].items()}
        obj["_currency_options"] = {**(obj.get("_currency_options") or {}), **added}  # replaced, not changed
    ctx.save(obj)
    ctx.emit("coupon.updated", obj, previous=before)
    return obj


@resource.route("DELETE", "/v1/coupons/{id}")
def delete(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Delete a coupon (existing discounts keep working on Stripe; here it simply disappears)."""
    obj = ctx.get("coupon", id)
    ctx.remove("coupon", id)
    ctx.emit("coupon.deleted", obj)
    return deleted_stub(obj)


@resource.route("GET", "/v1/coupons", params=LIST_PARAMS)
def list_coupons(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """List coupons, newest first."""
    return ctx.list_page("coupon", params, "/v1/coupons")
