"""Plans (the Prices API's predecessor): create, retrieve, update, delete, list; each plan is a recurring price.

Creating a plan creates the price with the same id (what subscriptions and invoices use), so a plan and its
price never disagree: the plan is rendered from the price. Any recurring price can also be read as a plan, as on
Stripe. ``product`` is a product id or an inline ``product[name]`` hash.
"""

from __future__ import annotations

from typing import Any

from stripebench_emulator.model.context import LIST_PARAMS, RequestContext
from stripebench_emulator.model.errors import invalid, missing_param, no_such
from stripebench_emulator.model.fields import apply_metadata, deleted_stub
from stripebench_emulator.model.params import Bool, Currency, Enum, Int, Metadata, Num, Param, Str, validate
from stripebench_emulator.model.registry import Resource
from stripebench_emulator.rules.catalog import new_price

resource = Resource("plan", prefix="plan", noun="plan", expandable={"product": "product"})

_INLINE_PRODUCT = {"name": Str(required=True), "active": Bool(), "id": Str(), "metadata": Metadata(),
                   "statement_descriptor": Str(max_length=22), "unit_label": Str()}


class ProductRef(Param):
    """``product=prod_…`` or ``product[name]=…`` (Stripe accepts either on plans)."""

    def convert(self, value: object, name: str) -> Any:
        if isinstance(value, dict):
            return validate(_INLINE_PRODUCT, value, prefix=name)
        return Str().convert(value, name)


CREATE: dict[str, Param] = {
    "currency": Currency(required=True), "interval": Enum("day", "week", "month", "year", required=True),
    "amount": Int(min=0), "amount_decimal": Num(min=0, as_string=True), "active": Bool(), "id": Str(),
    "interval_count": Int(min=1), "metadata": Metadata(), "nickname": Str(), "product": ProductRef(),
    "trial_period_days": Int(min=0), "usage_type": Enum("licensed", "metered"), "billing_scheme": Enum("per_unit"),
    "meter": Str(),
}


def _as_plan(price: dict[str, Any], created: int | None = None) -> dict[str, Any]:
    recurring = price["recurring"]
    return {
        "id": price["id"], "object": "plan", "active": price["active"], "amount": price["unit_amount"],
        "amount_decimal": price["unit_amount_decimal"], "billing_scheme": price["billing_scheme"],
        "created": created or price["created"], "currency": price["currency"], "interval": recurring["interval"],
        "interval_count": recurring["interval_count"], "livemode": False, "metadata": dict(price["metadata"]),
        "meter": recurring.get("meter"), "nickname": price["nickname"], "product": price["product"],
        "tiers_mode": None, "transform_usage": None, "trial_period_days": recurring.get("trial_period_days"),
        "usage_type": recurring["usage_type"],
    }


def plan_of(ctx: RequestContext, price: dict[str, Any] | None) -> dict[str, Any] | None:
    """A recurring price as the plan it also is (what a subscription item's ``plan`` shows), None for a one-time
    price."""
    if price is None or not price.get("recurring"):
        return None
    marker = ctx.store.peek("plan", price["id"])
    return _as_plan(price, marker["created"] if marker is not None else None)


def _plan(ctx: RequestContext, plan_id: str) -> dict[str, Any]:
    marker = ctx.find("plan", plan_id)
    price = ctx.find("price", plan_id)
    if (marker is not None and marker.get("deleted")) or price is None or not price.get("recurring"):
        raise no_such("plan", plan_id, param="plan")
    return _as_plan(price, marker["created"] if marker else None)


@resource.renderer
def render(obj: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """A stored plan marker shows its price's current fields."""
    if "amount" in obj or obj.get("deleted"):  # already a full plan (events carry those)
        return obj
    price = ctx.find("price", obj["id"])
    return _as_plan(price, obj["created"]) if price else obj


@resource.route("POST", "/v1/plans", params=CREATE)
def create(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create a plan (and the recurring price behind it)."""
    if "product" not in params:
        raise missing_param("product")
    if "amount" not in params and "amount_decimal" not in params:
        raise missing_param("amount")
    if params.get("id") and (ctx.find("plan", params["id"]) or ctx.find("price", params["id"])):
        raise invalid("Plan already exists.", param="id", code="resource_already_exists")
    price_params: dict[str, Any] = {
        "currency": params["currency"], "active": params.get("active", True), "nickname": params.get("nickname"),
        "metadata": params.get("metadata") or {},
        "recurring": {"interval": params["interval"], "interval_count": params.get("interval_count", 1),
                      "usage_type": params.get("usage_type", "licensed"),
                      "trial_period_days": params.get("trial_period_days"), "meter": params.get("meter")},
    }
    if "amount" in params:
        price_params["unit_amount"] = params["amount"]
    else:
        price_params["unit_amount_decimal"] = params["amount_decimal"]
    key = "product_data" if isinstance(params["product"], dict) else "product"
    price_params[key] = params["product"]
    if params.get("id"):  # a chosen id names both the plan and its price
        price_params["_id"] = params["id"]
    price = new_price(ctx, price_params)
    marker = {"id": price["id"], "object": "plan", "created": price["created"]}
    ctx.save(marker)
    ctx.emit("plan.created", _as_plan(price))
    return marker


@resource.route("GET", "/v1/plans/{id}")
def retrieve(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Retrieve a plan (any recurring price, too)."""
    return _plan(ctx, id)


@resource.route("POST", "/v1/plans/{id}", params={"active": Bool(), "metadata": Metadata(),
                                                 "nickname": Str(emptyable=True), "product": Str(),
                                                 "trial_period_days": Int(min=0)})
def update(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Update a plan's nickname, metadata, active flag, product or trial days (amounts are fixed)."""
    before = _plan(ctx, id)
    price = ctx.get("price", id, param="plan")
    for key in ("active", "nickname"):
        if key in params:
            price[key] = params[key]
    if "metadata" in params:
        price["metadata"] = apply_metadata(price["metadata"], params["metadata"])
    if "product" in params:
        price["product"] = ctx.get("product", params["product"], param="product")["id"]
    if "trial_period_days" in params:
        price["recurring"] = {**price["recurring"], "trial_period_days": params["trial_period_days"]}
    ctx.save(price)
    after = _as_plan(price, before["created"])
    ctx.emit("plan.updated", after, previous=before)
    return after


@resource.route("DELETE", "/v1/plans/{id}")
def delete(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Delete a plan (its price stays, inactive, for the subscriptions that use it)."""
    plan = _plan(ctx, id)
    price = ctx.get("price", id, param="plan")
    price["active"] = False
    ctx.save(price)
    ctx.save({"id": id, "object": "plan", "created": plan["created"], "deleted": True})
    ctx.emit("plan.deleted", plan)
    return deleted_stub(plan)


@resource.route("GET", "/v1/plans", params={**LIST_PARAMS, "active": Bool(), "product": Str()})
def list_plans(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """List plans made through this API, filtered by ``active`` / ``product``."""
    rows = [_as_plan(p, m["created"]) for m in ctx.store.scan("plan") if not m.get("deleted")
            for p in [ctx.find("price", m["id"])] if p is not None]
    rows = [r for r in rows if ("active" not in params or r["active"] == params["active"])
            and ("product" not in params or r["product"] == params["product"])]
    return ctx.list_page("plan", params, "/v1/plans", items=rows)
