"""Subscriptions (as a subscription-mode Checkout Session creates them): retrieve, list, update, cancel.

Items are stored inside the subscription (``_items``) and rendered as a ``subscription_item`` list with their price.
``current_period_start``/``_end`` sit on the items from 2025-03-31 on and on the subscription before that.
"""

from __future__ import annotations

import calendar
from datetime import datetime, timezone
from typing import Any

from stripebench_tui.emulator.context import LIST_PARAMS, RequestContext
from stripebench_tui.emulator.errors import invalid
from stripebench_tui.emulator.params import Bool, Enum, Hash, Int, Metadata, Str
from stripebench_tui.emulator.registry import Resource
from stripebench_tui.emulator.resources.common import apply_metadata
from stripebench_tui.emulator.versions import SUBSCRIPTION_PERIOD_ON_ITEMS

resource = Resource("subscription", prefix="sub", noun="subscription",
                    expandable={"customer": "customer", "latest_invoice": "invoice",
                                "default_payment_method": "payment_method"})
item_resource = Resource("subscription_item", prefix="si", noun="subscription item")


def period_end(start: int, interval: str, count: int) -> int:
    """``start`` moved on by ``count`` intervals (calendar months and years, like Stripe's billing)."""
    if interval in ("day", "week"):
        return start + count * (86400 if interval == "day" else 7 * 86400)
    moment = datetime.fromtimestamp(start, timezone.utc)
    months = count * (12 if interval == "year" else 1)
    year, month = divmod(moment.month - 1 + months, 12)
    year, month = moment.year + year, month + 1
    day = min(moment.day, calendar.monthrange(year, month)[1])
    return int(moment.replace(year=year, month=month, day=day).timestamp())


def _period_on_items(ctx: RequestContext) -> bool:
    return ctx.version_at_least(SUBSCRIPTION_PERIOD_ON_ITEMS)


@resource.renderer
def render(obj: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """Items as a list with embedded prices; period fields where the caller's version keeps them."""
    on_items = _period_on_items(ctx)
    data = []
    for item in obj["_items"]:
        rendered = dict(item)
        price = ctx.find("price", item["price"])
        rendered["price"] = ctx.render(price) if price else None
        if on_items:
            rendered["current_period_start"] = obj["_period_start"]
            rendered["current_period_end"] = obj["_period_end"]
        data.append(rendered)
    obj["items"] = {"object": "list", "data": data, "has_more": False, "total_count": len(data),
                    "url": f"/v1/subscription_items?subscription={obj['id']}"}
    if not on_items:
        obj["current_period_start"] = obj["_period_start"]
        obj["current_period_end"] = obj["_period_end"]
    return dict(sorted(obj.items()))


def create_subscription(ctx: RequestContext, customer_id: str, items: list[dict[str, Any]], *,
                        metadata: dict[str, str] | None = None, description: str | None = None,
                        default_payment_method: str | None = None,
                        discounts: list[dict[str, Any]] | None = None, trial_end: int | None = None,
                        billing_cycle_anchor: int | None = None,
                        trial_settings: dict[str, Any] | None = None) -> dict[str, Any]:
    """Create and save a subscription for ``items`` (``[{price, quantity}]``); emits ``created``.

    Active, or ``trialing`` until ``trial_end``; the first period runs to ``billing_cycle_anchor`` (or the trial's
    end) when given.
    """
    now = ctx.now()
    sub_id = ctx.new_id("sub")
    prices = [ctx.get("price", item["price"]) for item in items]
    recurring = [p for p in prices if p["recurring"]]
    interval = recurring[0]["recurring"] if recurring else {"interval": "month", "interval_count": 1}
    obj: dict[str, Any] = {
        "id": sub_id, "object": "subscription", "application": None, "application_fee_percent": None,
        "automatic_tax": {"disabled_reason": None, "enabled": False, "liability": None},
        "billing_cycle_anchor": billing_cycle_anchor or trial_end or now, "billing_cycle_anchor_config": None,
        "billing_mode": {"type": "flexible" if _period_on_items(ctx) else "classic"},
        "billing_thresholds": None, "cancel_at": None, "cancel_at_period_end": False, "canceled_at": None,
        "cancellation_details": {"comment": None, "feedback": None, "reason": None},
        "collection_method": "charge_automatically", "created": now, "currency": prices[0]["currency"],
        "customer": customer_id, "customer_account": None, "days_until_due": None,
        "default_payment_method": default_payment_method, "default_source": None, "default_tax_rates": [],
        "description": description, "discounts": discounts or [], "ended_at": None,
        "invoice_settings": {"account_tax_ids": None, "issuer": {"type": "self"}}, "latest_invoice": None,
        "livemode": False, "metadata": apply_metadata({}, metadata or {}), "next_pending_invoice_item_invoice": None,
        "on_behalf_of": None, "pause_collection": None,
        "payment_settings": {"payment_method_options": None, "payment_method_types": None,
                             "save_default_payment_method": "off"},
        "pending_invoice_item_interval": None, "pending_setup_intent": None, "pending_update": None,
        "schedule": None, "start_date": now, "status": "trialing" if trial_end else "active", "test_clock": None,
        "transfer_data": None, "trial_end": trial_end,
        "trial_settings": trial_settings or {"end_behavior": {"missing_payment_method": "create_invoice"}},
        "trial_start": now if trial_end else None,
        "_period_start": now,
        "_period_end": billing_cycle_anchor or trial_end
        or period_end(now, interval["interval"], interval.get("interval_count", 1)),
        "_items": [{"id": ctx.new_id("si"), "object": "subscription_item", "billing_thresholds": None,
                    "created": now, "discounts": [], "metadata": {}, "price": price["id"],
                    "quantity": item.get("quantity", 1), "subscription": sub_id, "tax_rates": []}
                   for item, price in zip(items, prices)],
    }
    ctx.save(obj)
    ctx.emit("customer.subscription.created", obj)
    return obj


@resource.route("GET", "/v1/subscriptions/{id}")
def retrieve(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Retrieve a subscription."""
    return ctx.get("subscription", id)


@resource.route("GET", "/v1/subscriptions", params={
    **LIST_PARAMS, "customer": Str(), "price": Str(),
    "status": Enum("active", "all", "canceled", "ended", "incomplete", "incomplete_expired", "past_due", "paused",
                   "trialing", "unpaid")})
def list_subscriptions(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """List subscriptions (not canceled ones unless ``status`` asks) with ``customer``/``price`` filters."""
    status = params.get("status")

    def keep(s: dict[str, Any]) -> bool:
        if status is None and s["status"] == "canceled":
            return False
        if status not in (None, "all") and s["status"] != ("canceled" if status == "ended" else status):
            return False
        if "customer" in params and s["customer"] != params["customer"]:
            return False
        return "price" not in params or any(i["price"] == params["price"] for i in s["_items"])

    return ctx.list_page("subscription", params, "/v1/subscriptions", where=keep)


@resource.route("POST", "/v1/subscriptions/{id}", params={
    "cancel_at_period_end": Bool(), "cancel_at": Int(emptyable=True), "metadata": Metadata(),
    "description": Str(emptyable=True), "default_payment_method": Str(emptyable=True),
    "cancellation_details": Hash({"comment": Str(emptyable=True), "feedback": Str(emptyable=True)})})
def update(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Update ``cancel_at_period_end``, ``cancel_at``, metadata, description or the default payment method."""
    obj = ctx.get("subscription", id)
    before = ctx.get("subscription", id)
    if obj["status"] == "canceled":
        raise invalid("A canceled subscription can only update its cancellation_details and metadata.")
    if "cancel_at_period_end" in params:
        obj["cancel_at_period_end"] = params["cancel_at_period_end"]
        obj["cancel_at"] = obj["_period_end"] if params["cancel_at_period_end"] else None
        obj["canceled_at"] = ctx.now() if params["cancel_at_period_end"] else None
    if "cancel_at" in params:
        obj["cancel_at"] = params["cancel_at"]
        obj["cancel_at_period_end"] = False
    if "metadata" in params:
        obj["metadata"] = apply_metadata(obj["metadata"], params["metadata"])
    for name in ("description", "default_payment_method"):
        if name in params:
            obj[name] = params[name]
    if "cancellation_details" in params:
        obj["cancellation_details"].update(params["cancellation_details"] or {})
    ctx.save(obj)
    ctx.emit("customer.subscription.updated", obj, previous=before)
    return obj


@resource.route("DELETE", "/v1/subscriptions/{id}", params={
    "invoice_now": Bool(), "prorate": Bool(),
    "cancellation_details": Hash({"comment": Str(emptyable=True), "feedback": Str(emptyable=True)})})
def cancel(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Cancel at once: ``status=canceled`` and ``customer.subscription.deleted``."""
    obj = ctx.get("subscription", id)
    if obj["status"] == "canceled":
        raise invalid(f"A canceled subscription can't be canceled again: {id}.")
    now = ctx.now()
    obj.update({"status": "canceled", "canceled_at": now, "ended_at": now})
    obj["cancellation_details"].update({"reason": "cancellation_requested", **(params.get("cancellation_details") or {})})
    ctx.save(obj)
    ctx.emit("customer.subscription.deleted", obj)
    return obj
