"""Subscription items: create, retrieve, update, delete, list — each a change of its subscription (with prorations).

Items are stored inside their subscription (``_items``); these endpoints go through the same update path as
``POST /v1/subscriptions/{id}`` with ``items[]``, so prorations and events are the same.
"""

from __future__ import annotations

from typing import Any

from stripebench_emulator.api.plans import plan_of
from stripebench_emulator.model.context import LIST_PARAMS, RequestContext
from stripebench_emulator.model.errors import invalid, missing_param, no_such
from stripebench_emulator.model.params import Bool, Enum, Int, Metadata, Str
from stripebench_emulator.model.registry import Resource
from stripebench_emulator.model.versions import SUBSCRIPTION_PERIOD_ON_ITEMS
from stripebench_emulator.rules import billing_changes as changes
from stripebench_emulator.rules import billing_tax, billing_time, billing_update

resource = Resource("subscription_item", prefix="si", noun="subscription item",
                    expandable={"price": "price", "discounts": "discount"})
PAYMENT_BEHAVIOR = Enum("allow_incomplete", "default_incomplete", "error_if_incomplete", "pending_if_incomplete")
CHANGE = {"proration_behavior": changes.PRORATION, "proration_date": Int(), "payment_behavior": PAYMENT_BEHAVIOR,
          "metadata": Metadata(), "price": Str(), "plan": Str(), "price_data": changes.PRICE_DATA,
          "quantity": Int(min=0), "tax_rates": changes.ITEM_FIELDS["tax_rates"], "discounts": changes.DISCOUNTS,
          "billing_thresholds": changes.ITEM_FIELDS["billing_thresholds"], "off_session": Bool()}


def _locate(ctx: RequestContext, item_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    for sub in ctx.store.scan("subscription"):
        for item in sub["_items"]:
            if item["id"] == item_id:
                return ctx.get("subscription", sub["id"]), dict(item)
    raise no_such("subscription item", item_id)


def render_item(item: dict[str, Any], sub: dict[str, Any] | None, ctx: RequestContext) -> dict[str, Any]:
    """An item with its price (and plan) embedded, and its period from 2025-03-31."""
    out = dict(item)
    price = ctx.find("price", item["price"])
    out["price"] = ctx.render(price) if price else None
    out["plan"] = plan_of(ctx, price)  # the price as a plan, as Stripe still shows it on items
    out["tax_rates"] = billing_tax.current(ctx, item.get("tax_rates"))
    if sub is not None and ctx.version_at_least(SUBSCRIPTION_PERIOD_ON_ITEMS):
        out["current_period_start"], out["current_period_end"] = sub["_period_start"], sub["_period_end"]
    return dict(sorted(out.items()))


@resource.renderer
def render(obj: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """Standalone items name their price by id in storage; render it embedded."""
    if isinstance(obj.get("price"), dict):
        return obj
    sub = ctx.find("subscription", obj.get("subscription", ""))
    return render_item(obj, sub, ctx)


def _change(ctx: RequestContext, sub: dict[str, Any], spec: dict[str, Any], params: dict[str, Any]) -> Any:
    before = ctx.get("subscription", sub["id"])
    if sub["status"] == "canceled":
        raise invalid("A canceled subscription can only update its cancellation_details and metadata.")
    now = billing_time.clock_now(ctx, sub.get("test_clock"))
    update: dict[str, Any] = {k: params[k] for k in ("proration_behavior", "proration_date", "payment_behavior") if k in params}
    error = billing_update.apply(billing_time.at(ctx, now), sub, {**update, "items": [spec]}, now)
    ctx.save(sub)
    ctx.emit("customer.subscription.updated", sub, previous=before)
    return error


def _spec(params: dict[str, Any]) -> dict[str, Any]:
    return {k: params[k] for k in ("price", "plan", "price_data", "quantity", "metadata", "tax_rates", "discounts")
            if k in params}


@resource.route("POST", "/v1/subscription_items", params={**CHANGE, "subscription": Str(required=True)})
def create(ctx: RequestContext, params: dict[str, Any]) -> Any:
    """Add an item to a subscription."""
    sub = ctx.get("subscription", params["subscription"], param="subscription")
    if "price" not in params and "price_data" not in params and "plan" not in params:
        raise missing_param("price")
    known = {i["id"] for i in sub["_items"]}
    error = _change(ctx, sub, _spec(params), params)
    if error is not None:
        return error
    added = next(i for i in ctx.get("subscription", sub["id"])["_items"] if i["id"] not in known)
    return added


@resource.route("GET", "/v1/subscription_items/{id}")
def retrieve(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Retrieve an item."""
    return _locate(ctx, id)[1]


@resource.route("POST", "/v1/subscription_items/{id}", params=CHANGE)
def update(ctx: RequestContext, params: dict[str, Any], id: str) -> Any:
    """Change an item's price, quantity or metadata (prorated per ``proration_behavior``)."""
    sub, _ = _locate(ctx, id)
    error = _change(ctx, sub, {"id": id, **_spec(params)}, params)
    return error or _locate(ctx, id)[1]


@resource.route("DELETE", "/v1/subscription_items/{id}", params={
    "proration_behavior": changes.PRORATION, "proration_date": Int(), "clear_usage": Bool()})
def delete(ctx: RequestContext, params: dict[str, Any], id: str) -> Any:
    """Remove an item (a subscription keeps at least one)."""
    sub, _ = _locate(ctx, id)
    error = _change(ctx, sub, {"id": id, "deleted": True}, params)
    return error or {"id": id, "object": "subscription_item", "deleted": True}


@resource.route("GET", "/v1/subscription_items", params={**LIST_PARAMS, "subscription": Str(required=True)})
def list_items(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """A subscription's items."""
    sub = ctx.get("subscription", params["subscription"], param="subscription")
    return ctx.list_page("subscription_item", {k: v for k, v in params.items() if k not in ("subscription", "created")},
                         f"/v1/subscription_items?subscription={sub['id']}", items=[dict(i) for i in sub["_items"]])
