"""Subscriptions: create, retrieve, list, search, update, cancel, resume (and those subscription-mode Checkout makes).

Billing itself (first invoice, prorations, renewals on a test clock) lives in ``billing_start``, ``billing_changes``
and ``billing_cycle``; this module validates params and applies them.

Items are stored inside the subscription (``_items``) and rendered as a ``subscription_item`` list with their price.
``current_period_start``/``_end`` sit on the items from 2025-03-31 on and on the subscription before that.
"""

from __future__ import annotations

from typing import Any

from stripebench_emulator.api import invoices, setup_intents
from stripebench_emulator.api.subscription_items import render_item
from stripebench_emulator.model.context import LIST_PARAMS, RequestContext
from stripebench_emulator.model.errors import StripeError, invalid, unknown_param
from stripebench_emulator.model.fields import apply_metadata
from stripebench_emulator.model.params import Array, Bool, Currency, Enum, Hash, Int, Metadata, Str
from stripebench_emulator.model.registry import Resource
from stripebench_emulator.model.search import SEARCH_PARAMS, search_page
from stripebench_emulator.model.versions import LIST_TOTAL_COUNT_REMOVED, SUBSCRIPTION_PERIOD_ON_ITEMS
from stripebench_emulator.rules import billing_changes as changes
from stripebench_emulator.rules import billing_cycle as cycle
from stripebench_emulator.rules import billing_discounts, billing_start, billing_tax, billing_time, billing_update

resource = Resource("subscription", prefix="sub", noun="subscription",
                    expandable={"customer": "customer", "latest_invoice": "invoice",
                                "default_payment_method": "payment_method", "discounts": "discount",
                                "items.data.discounts": "discount", "pending_setup_intent": "setup_intent"})


def _period_on_items(ctx: RequestContext) -> bool:
    return ctx.version_at_least(SUBSCRIPTION_PERIOD_ON_ITEMS)


@resource.renderer
def render(obj: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """Items as a list with embedded prices; period fields where the caller's version keeps them."""
    data = [render_item(item, obj, ctx) for item in obj["_items"]]  # as /v1/subscription_items shows each
    obj["items"] = {"object": "list", "data": data, "has_more": False, "total_count": len(data),
                    "url": f"/v1/subscription_items?subscription={obj['id']}"}
    obj["default_tax_rates"] = billing_tax.current(ctx, obj.get("default_tax_rates"))
    if not _period_on_items(ctx):
        obj["current_period_start"] = obj["_period_start"]
        obj["current_period_end"] = obj["_period_end"]
    return dict(sorted(obj.items()))


def create_subscription(ctx: RequestContext, customer_id: str, items: list[dict[str, Any]], *,
                        metadata: dict[str, str] | None = None, description: str | None = None,
                        default_payment_method: str | None = None,
                        discounts: list[dict[str, Any]] | None = None, trial_end: int | None = None,
                        billing_cycle_anchor: int | None = None,
                        trial_settings: dict[str, Any] | None = None,
                        built_items: list[dict[str, Any]] | None = None, emit: bool = True) -> dict[str, Any]:
    """Create and save a subscription for ``items`` (``[{price, quantity}]``); emits ``created``.

    Active, or ``trialing`` until ``trial_end``; the first period runs to ``billing_cycle_anchor`` (or the trial's
    end) when given. ``built_items`` (subscription items already made) replace ``items``' defaults.
    """
    now = ctx.now()
    sub_id = ctx.new_id("sub")
    prices = [ctx.get("price", item["price"]) for item in items]
    recurring = [p for p in prices if p["recurring"]]
    interval: dict[str, Any] = recurring[0]["recurring"] if recurring else {"interval": "month", "interval_count": 1}
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
        or billing_time.period_end(now, interval["interval"], interval.get("interval_count", 1)),
        "_items": [{"id": ctx.new_id("si"), "object": "subscription_item", "billing_thresholds": None,
                    "created": now, "discounts": [], "metadata": {}, "price": price["id"],
                    "quantity": item.get("quantity", 1), "subscription": sub_id, "tax_rates": []}
                   for item, price in zip(items, prices, strict=False)] if built_items is None else built_items,
    }
    ctx.save(obj)
    if emit:
        ctx.emit("customer.subscription.created", obj)
    return obj


PAYMENT_BEHAVIOR = Enum("allow_incomplete", "default_incomplete", "error_if_incomplete", "pending_if_incomplete")
CANCELLATION = Hash({"comment": Str(emptyable=True), "feedback": Enum(
    "customer_service", "low_quality", "missing_features", "other", "switched_service", "too_complex", "too_expensive",
    "unused", emptyable=True)})
TRIAL_SETTINGS = Hash({"end_behavior": Hash({"missing_payment_method": Enum("cancel", "create_invoice", "pause",
                                                                            required=True)}, required=True)})
COMMON = {
    "add_invoice_items": Array(changes.INVOICE_ITEM), "cancel_at": Int(emptyable=True),
    "cancel_at_period_end": Bool(), "collection_method": Enum("charge_automatically", "send_invoice"),
    "days_until_due": Int(min=0), "default_payment_method": Str(emptyable=True), "default_source": Str(emptyable=True),
    "default_tax_rates": Array(Str(), emptyable=True), "description": Str(emptyable=True),
    "discounts": changes.DISCOUNTS, "metadata": Metadata(), "off_session": Bool(),
    "payment_behavior": PAYMENT_BEHAVIOR, "proration_behavior": changes.PRORATION, "trial_end": Str(),
    "trial_from_plan": Bool(), "trial_settings": TRIAL_SETTINGS,
    # passed on to the invoices the subscription makes (billing_invoice); the types checked as an invoice's are
    "payment_settings": Hash({"save_default_payment_method": Enum("off", "on_subscription"),
                              "payment_method_types": invoices.PAYMENT_METHOD_TYPES_PARAM,
                              "payment_method_options": invoices.PAYMENT_METHOD_OPTIONS_PARAM}),
    "automatic_tax": Hash({"enabled": Bool(required=True)}),
}
CREATE = {**COMMON, "customer": Str(required=True), "items": Array(changes.CREATE_ITEM, required=True),
          "billing_cycle_anchor": Int(),
          "billing_cycle_anchor_config": Hash({"day_of_month": Int(min=1, max=31, required=True),
                                               "hour": Int(min=0, max=23), "minute": Int(min=0, max=59),
                                               "month": Int(min=1, max=12), "second": Int(min=0, max=59)}),
          "backdate_start_date": Int(), "currency": Currency(), "trial_period_days": Int(min=0, max=730),
          "billing_mode": Hash({"type": Enum("classic", "flexible", required=True)})}
UPDATE = {**COMMON, "items": Array(changes.UPDATE_ITEM), "proration_date": Int(),
          "billing_cycle_anchor": Enum("now", "unchanged"), "cancellation_details": CANCELLATION,
          "pause_collection": Hash({"behavior": Enum("keep_as_draft", "mark_uncollectible", "void", required=True),
                                    "resumes_at": Int()}, emptyable=True)}


def _now(ctx: RequestContext, sub: dict[str, Any]) -> int:
    return billing_time.clock_now(ctx, sub.get("test_clock"))


def _cancel_fields(sub: dict[str, Any], params: dict[str, Any], now: int) -> None:
    if "cancel_at_period_end" in params:
        sub["cancel_at_period_end"] = params["cancel_at_period_end"]
        sub["cancel_at"] = sub["_period_end"] if params["cancel_at_period_end"] else None
        sub["canceled_at"] = now if params["cancel_at_period_end"] else None
    if "cancel_at" in params:
        if params["cancel_at"] is not None and params["cancel_at"] <= now:
            raise invalid("Invalid timestamp: must be an integer Unix timestamp in the future.", param="cancel_at")
        sub["cancel_at"] = params["cancel_at"]
        sub["cancel_at_period_end"] = False
        sub["canceled_at"] = now if params["cancel_at"] else None


@resource.route("POST", "/v1/subscriptions", params=CREATE)
def create(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any] | StripeError:
    """Create a subscription and bill its first invoice (see ``billing_start``)."""
    customer = ctx.get("customer", params["customer"], param="customer")
    now = billing_time.clock_now(ctx, customer.get("test_clock"))
    moved = billing_time.at(ctx, now)
    if not params["items"]:
        raise invalid("Missing required param: items.", param="items", code="parameter_missing")
    if params.get("default_payment_method"):
        pm = moved.get("payment_method", params["default_payment_method"], param="default_payment_method")
        if pm.get("customer") != customer["id"]:
            raise invalid("The customer does not have a payment method with the ID "
                          f"{pm['id']}. The payment method must be attached to the customer.",
                          param="default_payment_method")
    if params.get("collection_method") == "send_invoice" and "days_until_due" not in params:
        raise invalid("Missing required param: days_until_due.", param="days_until_due", code="parameter_missing")
    sub_id_hint = "sub_pending"
    built = [changes.new_item(moved, sub_id_hint, spec, now, f"items[{i}]") for i, spec in enumerate(params["items"])]
    changes.check_items(moved, built)
    prices = [moved.get("price", i["price"]) for i in built]
    interval = (prices[0]["recurring"]["interval"], prices[0]["recurring"].get("interval_count", 1))
    trial_end = billing_start.trial_end_from(moved, params, prices, now)
    anchor = billing_start.anchor_from(params, trial_end or now, interval)
    sub = create_subscription(moved, customer["id"], [{"price": i["price"]} for i in built],
                              metadata=params.get("metadata"), description=params.get("description"),
                              default_payment_method=params.get("default_payment_method"), trial_end=trial_end,
                              billing_cycle_anchor=anchor, trial_settings=params.get("trial_settings"),
                              built_items=built, emit=False)
    sub["_items"] = [{**item, "subscription": sub["id"]} for item in sub["_items"]]
    if trial_end and anchor:  # the trial runs first; the anchor then shortens the first paid period
        sub["_period_end"] = trial_end
    sub["billing_cycle_anchor"] = anchor or trial_end or now
    sub["billing_cycle_anchor_config"] = ({"day_of_month": None, "hour": None, "minute": None, "month": None,
                                           "second": None, **params["billing_cycle_anchor_config"]}
                                          if "billing_cycle_anchor_config" in params else None)
    if "billing_mode" in params:
        sub["billing_mode"] = {"type": params["billing_mode"]["type"]}
    sub["test_clock"] = customer.get("test_clock")
    sub["collection_method"] = params.get("collection_method", "charge_automatically")
    sub["days_until_due"] = params.get("days_until_due")
    _payment_settings(sub, params)
    _cancel_fields(sub, params, now)
    changes.discounts_from(moved, sub, params.get("discounts"), now)
    sub["default_tax_rates"] = billing_tax.rates_from(moved, params.get("default_tax_rates"), "default_tax_rates")
    sub["status"] = "trialing" if trial_end else "incomplete"
    ctx.save(sub)
    ctx.emit("customer.subscription.created", sub)
    before = ctx.get("subscription", sub["id"])
    error = billing_start.first_invoice(moved, sub, params, now)
    if sub["status"] == "trialing" and not cycle.payment_method_for(moved, sub):
        # Nothing to charge yet and nothing to charge with: Stripe makes a SetupIntent to collect the card the
        # trial's end will charge (its client_secret goes to the page; subscription-gym's trial task returns it)
        sub["pending_setup_intent"] = setup_intents.new_setup_intent(
            moved, {"customer": sub["customer"], "usage": "off_session"})["id"]
    ctx.save(sub)
    ctx.emit("customer.subscription.updated", sub, previous=before)
    return error or sub


@resource.route("GET", "/v1/subscriptions/search", params=SEARCH_PARAMS)
def search(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Search subscriptions (``status``, ``created``, ``metadata['k']``)."""
    return search_page(ctx, "subscription", params, "/v1/subscriptions/search", {"status", "created"})


@resource.route("GET", "/v1/subscriptions/{id}")
def retrieve(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Retrieve a subscription."""
    return ctx.get("subscription", id)


@resource.route("GET", "/v1/subscriptions", params={
    **LIST_PARAMS, "customer": Str(), "price": Str(), "test_clock": Str(),
    "collection_method": Enum("charge_automatically", "send_invoice"),
    "status": Enum("active", "all", "canceled", "ended", "incomplete", "incomplete_expired", "past_due", "paused",
                   "trialing", "unpaid"), "include": Array(Enum("total_count"))})
def list_subscriptions(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """List subscriptions (not canceled ones unless ``status`` asks) with ``customer``/``price`` filters; before
    2025-03-31, ``include[]=total_count`` adds how many match in all (from then on the parameter is unknown)."""
    status = params.get("status")
    if params.get("include") and ctx.version_at_least(LIST_TOTAL_COUNT_REMOVED):
        raise unknown_param("include")

    def keep(s: dict[str, Any]) -> bool:
        if status is None and s["status"] == "canceled":
            return False
        if status not in (None, "all") and s["status"] != ("canceled" if status == "ended" else status):
            return False
        for name in ("customer", "test_clock", "collection_method"):
            if name in params and s.get(name) != params[name]:
                return False
        return "price" not in params or any(i["price"] == params["price"] for i in s["_items"])

    page = ctx.list_page("subscription", params, "/v1/subscriptions", where=keep)
    if params.get("include"):
        page["total_count"] = sum(1 for s in ctx.store.newest_first("subscription") if not s.get("deleted") and keep(s))
    return page


def _payment_settings(sub: dict[str, Any], params: dict[str, Any]) -> None:
    """Apply ``payment_settings`` (a new dict: the stored one is never changed in place)."""
    given = params.get("payment_settings")
    if not given:
        return
    settings = invoices.apply_payment_settings(sub["payment_settings"], given)
    if "save_default_payment_method" in given:
        settings["save_default_payment_method"] = given["save_default_payment_method"]
    sub["payment_settings"] = settings


@resource.route("POST", "/v1/subscriptions/{id}", params=UPDATE)
def update(ctx: RequestContext, params: dict[str, Any], id: str) -> Any:
    """Update items (with prorations), trial, cancellation, discounts, payment method, metadata…"""
    sub = ctx.get("subscription", id)
    before = ctx.get("subscription", id)
    if sub["status"] == "canceled" and set(params) - {"metadata", "cancellation_details"}:
        raise invalid("A canceled subscription can only update its cancellation_details and metadata.")
    now = _now(ctx, sub)
    _payment_settings(sub, params)  # before billing: an invoice this update makes gets them
    error = billing_update.apply(billing_time.at(ctx, now), sub, params, now)
    _cancel_fields(sub, params, now)
    if "metadata" in params:
        sub["metadata"] = apply_metadata(sub["metadata"], params["metadata"])
    for name in ("description", "default_payment_method", "days_until_due", "collection_method"):
        if name in params:
            sub[name] = params[name]
    if "cancellation_details" in params:
        sub["cancellation_details"] = {**sub["cancellation_details"], **(params["cancellation_details"] or {})}
    if "pause_collection" in params:
        sub["pause_collection"] = params["pause_collection"] and {"resumes_at": None, **params["pause_collection"]}
    ctx.save(sub)
    ctx.emit("customer.subscription.updated", sub, previous=before)
    return error or sub


@resource.route("DELETE", "/v1/subscriptions/{id}", params={
    "invoice_now": Bool(), "prorate": Bool(), "cancellation_details": CANCELLATION})
def cancel(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Cancel at once: ``status=canceled`` and ``customer.subscription.deleted`` (``prorate``/``invoice_now``)."""
    sub = ctx.get("subscription", id)
    if sub["status"] == "canceled":
        raise invalid(f"A canceled subscription can't be canceled again: {id}.")
    now = _now(ctx, sub)
    moved = billing_time.at(ctx, now)
    if params.get("prorate"):
        sub["_pending_lines"] = (sub.get("_pending_lines") or []) + changes.proration_lines(moved, sub, sub["_items"],
                                                                                          [], now)
    if params.get("invoice_now") and sub.get("_pending_lines"):
        invoice = cycle.draft(moved, sub, [], "subscription_cycle", now)
        cycle.bills.finalize(moved, invoice, now)
    sub["cancellation_details"] = {**sub["cancellation_details"], "reason": "cancellation_requested",
                                   **(params.get("cancellation_details") or {})}
    sub["canceled_at"] = now
    cycle.end(moved, sub, now, "cancellation_requested")
    return sub


@resource.route("DELETE", "/v1/subscriptions/{id}/discount")
def delete_discount(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Remove the subscription's discount (``customer.discount.deleted``); answers the deleted discount."""

    sub = ctx.get("subscription", id)
    if not sub.get("discounts"):
        raise StripeError(f"No active discount for subscription: {id}", status=404, code="resource_missing")
    before = ctx.get("subscription", id)
    removed = [ctx.get("discount", di) for di in sub["discounts"]]
    sub["_discounts"], sub["discounts"] = [], []
    billing_discounts.announce(ctx, removed, [])
    ctx.save(sub)
    ctx.emit("customer.subscription.updated", sub, previous=before)
    return billing_discounts.deleted(removed[0])


@resource.route("POST", "/v1/subscriptions/{id}/resume", params={
    "billing_cycle_anchor": Enum("now", "unchanged"), "proration_behavior": changes.PRORATION,
    "proration_date": Int()})
def resume(ctx: RequestContext, params: dict[str, Any], id: str) -> Any:
    """Resume a paused subscription: active again, a new period from now, invoiced and charged."""
    sub = ctx.get("subscription", id)
    if sub["status"] != "paused":
        raise invalid(f"Subscription {id} cannot be resumed because it is not paused (status: {sub['status']}).")
    before = ctx.get("subscription", id)
    now = _now(ctx, sub)
    moved = billing_time.at(ctx, now)
    interval = cycle.interval_of(ctx, sub)
    sub.update(status="active", billing_cycle_anchor=now, _period_start=now,
               _period_end=billing_time.period_end(now, *interval))
    invoice = cycle.draft(moved, sub, cycle.cycle_lines(moved, sub, now, sub["_period_end"]), "subscription_cycle",
                          now)
    error = cycle.collect(moved, sub, invoice, now, "allow_incomplete")
    if error is not None:
        sub["status"] = "past_due"
    ctx.save(sub)
    ctx.emit("customer.subscription.resumed", sub)
    ctx.emit("customer.subscription.updated", sub, previous=before)
    return sub
