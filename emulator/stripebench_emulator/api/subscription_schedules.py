"""Subscription schedules: phases of items over time; create (or ``from_subscription``), retrieve, list, update,
cancel, release.

A schedule starting now creates its subscription at once from phase 0; each later phase replaces the items when its
``start_date`` comes (on a test clock, during ``advance``), prorated per the phase's ``proration_behavior``. After the
last phase ``end_behavior`` ``release`` leaves the subscription running on its own, ``cancel`` cancels it.
"""

from __future__ import annotations

from typing import Any

from stripebench_emulator.api import subscriptions
from stripebench_emulator.model.context import LIST_PARAMS, RequestContext
from stripebench_emulator.model.errors import invalid
from stripebench_emulator.model.fields import apply_metadata
from stripebench_emulator.model.params import Array, Enum, Hash, Int, Metadata, Str
from stripebench_emulator.model.registry import Resource
from stripebench_emulator.rules import billing_changes as changes
from stripebench_emulator.rules import billing_cycle as cycle
from stripebench_emulator.rules import billing_time, billing_update

resource = Resource("subscription_schedule", prefix="sub_sched", noun="subscription schedule",
                    expandable={"customer": "customer", "subscription": "subscription"})
PHASE = Hash({"items": Array(Hash({"price": Str(), "plan": Str(), "price_data": changes.PRICE_DATA,
                                   "quantity": Int(min=0), "metadata": Metadata(), "discounts": changes.DISCOUNTS,
                                   "tax_rates": Array(Str(), emptyable=True)}), required=True),
              "iterations": Int(min=1), "end_date": Str(), "start_date": Str(), "trial_end": Str(),
              "proration_behavior": changes.PRORATION, "metadata": Metadata(), "discounts": changes.DISCOUNTS,
              "add_invoice_items": Array(changes.INVOICE_ITEM), "description": Str(emptyable=True),
              "default_payment_method": Str(), "duration": Hash({"interval": Enum("day", "week", "month", "year",
                                                                                  required=True),
                                                                 "interval_count": Int(min=1)})})
END_BEHAVIOR = Enum("cancel", "none", "release", "renew")


def next_action(sched: dict[str, Any]) -> int | None:
    """When the schedule's next phase starts (or its last one ends), if it is still running."""
    if sched["status"] not in ("active", "not_started"):
        return None
    if sched["status"] == "not_started":
        return sched["phases"][0]["start_date"]
    return sched["phases"][sched["_phase"]]["end_date"]


def _phases(ctx: RequestContext, specs: list[dict[str, Any]], start: int) -> list[dict[str, Any]]:
    phases, moment = [], start
    for n, spec in enumerate(specs):
        items = [changes.resolve_price(ctx, item, f"phases[{n}][items][{i}]") for i, item in enumerate(spec["items"])]
        interval = (items[0]["recurring"]["interval"], items[0]["recurring"].get("interval_count", 1))
        if spec.get("end_date", "").isdigit():
            end = int(spec["end_date"])
        elif spec.get("iterations"):
            end = billing_time.period_end(moment, interval[0], interval[1] * spec["iterations"])
        elif spec.get("duration"):
            end = billing_time.period_end(moment, spec["duration"]["interval"], spec["duration"].get("interval_count", 1))
        elif n == len(specs) - 1:
            end = billing_time.period_end(moment, *interval)
        else:
            raise invalid(f"Missing required param: phases[{n}][end_date].", param=f"phases[{n}][end_date]",
                          code="parameter_missing")
        if end <= moment:
            raise invalid("The phase end_date must be after its start_date.", param=f"phases[{n}][end_date]")
        phases.append({
            "add_invoice_items": [], "application_fee_percent": None, "billing_cycle_anchor": None,
            "collection_method": None, "currency": items[0]["currency"],
            "default_payment_method": spec.get("default_payment_method"), "default_tax_rates": [],
            "description": spec.get("description"), "discounts": [], "end_date": end,
            "invoice_settings": None, "items": [
                {"discounts": [], "metadata": {k: v for k, v in (it.get("metadata") or {}).items() if v is not None},
                 "price": price["id"], "quantity": it.get("quantity", 1), "tax_rates": []}
                for it, price in zip(spec["items"], items, strict=False)],
            "metadata": {}, "on_behalf_of": None,
            "proration_behavior": spec.get("proration_behavior", "create_prorations"), "start_date": moment,
            "transfer_data": None, "trial_end": int(spec["trial_end"]) if spec.get("trial_end", "").isdigit()
            else None})
        moment = end
    return phases


def _shape(ctx: RequestContext, customer: dict[str, Any], phases: list[dict[str, Any]], params: dict[str, Any],
           now: int) -> dict[str, Any]:
    return {"id": ctx.new_id("sub_sched"), "object": "subscription_schedule", "application": None,
            "billing_mode": {"type": "flexible" if ctx.version_at_least("2025-06-30") else "classic"},
            "canceled_at": None, "completed_at": None, "created": now, "current_phase": None,
            "customer": customer["id"], "customer_account": None,
            "default_settings": {"application_fee_percent": None, "automatic_tax": {"disabled_reason": None,
                                                                                   "enabled": False,
                                                                                   "liability": None},
                                 "billing_cycle_anchor": "automatic", "billing_thresholds": None,
                                 "collection_method": "charge_automatically", "default_payment_method": None,
                                 "description": None, "invoice_settings": {"account_tax_ids": None,
                                                                           "days_until_due": None,
                                                                           "issuer": {"type": "self"}},
                                 "on_behalf_of": None, "transfer_data": None},
            "end_behavior": params.get("end_behavior", "release"), "livemode": False,
            "metadata": apply_metadata({}, params.get("metadata") or {}), "phases": phases, "released_at": None,
            "released_subscription": None, "status": "not_started", "subscription": None,
            "test_clock": customer.get("test_clock"), "_phase": 0}


def _start(ctx: RequestContext, sched: dict[str, Any], now: int) -> None:
    """Phase 0 begins: create the subscription (billed like ``POST /v1/subscriptions``)."""
    phase = sched["phases"][0]
    params: dict[str, Any] = {"customer": sched["customer"], "_from_schedule": True,
                              "items": [{"price": i["price"], "quantity": i["quantity"]} for i in phase["items"]]}
    if phase["trial_end"]:
        params["trial_end"] = str(phase["trial_end"])
    if phase["default_payment_method"]:
        params["default_payment_method"] = phase["default_payment_method"]
    sub = subscriptions.create(ctx, params)
    if not isinstance(sub, dict):
        raise sub
    sub = ctx.get("subscription", sub["id"])
    sub["schedule"] = sched["id"]
    ctx.save(sub)
    sched.update(status="active", subscription=sub["id"],
                 current_phase={"end_date": phase["end_date"], "start_date": phase["start_date"]})


def run_phase(ctx: RequestContext, sched: dict[str, Any], now: int) -> None:
    """The schedule's next boundary came: start, move to the next phase, or end per ``end_behavior``."""
    before = ctx.get("subscription_schedule", sched["id"])
    if sched["status"] == "not_started":
        _start(ctx, sched, now)
    elif sched["_phase"] + 1 < len(sched["phases"]):
        sched["_phase"] += 1
        phase = sched["phases"][sched["_phase"]]
        sub = ctx.get("subscription", sched["subscription"])
        if sub["status"] != "canceled":
            before_sub = ctx.get("subscription", sub["id"])
            specs = [{"id": i["id"], "deleted": True} for i in sub["_items"]]
            specs += [{"price": i["price"], "quantity": i["quantity"]} for i in phase["items"]]
            billing_update.apply(ctx, sub, {"items": specs, "proration_behavior": phase["proration_behavior"]}, now)
            ctx.save(sub)
            ctx.emit("customer.subscription.updated", sub, previous=before_sub)
        sched["current_phase"] = {"end_date": phase["end_date"], "start_date": phase["start_date"]}
    else:
        _finish(ctx, sched, now)
    ctx.save(sched)
    ctx.emit("subscription_schedule.updated", sched, previous=before)


def _finish(ctx: RequestContext, sched: dict[str, Any], now: int) -> None:
    sub = ctx.find("subscription", sched["subscription"] or "")
    sched["current_phase"] = None
    if sched["end_behavior"] == "cancel" and sub and sub["status"] != "canceled":
        cycle.end(ctx, sub, now, "cancellation_requested")
        sched.update(status="completed", completed_at=now)
        ctx.emit("subscription_schedule.completed", sched)
        return
    sched.update(status="released", released_at=now, released_subscription=sched["subscription"],
                 subscription=None)
    if sub:
        sub["schedule"] = None
        ctx.save(sub)
    ctx.emit("subscription_schedule.released", sched)


@resource.route("POST", "/v1/subscription_schedules", params={
    "customer": Str(), "from_subscription": Str(), "phases": Array(PHASE), "start_date": Str(),
    "end_behavior": END_BEHAVIOR, "metadata": Metadata(), "default_settings": Hash({}, emptyable=True)})
def create(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create a schedule from ``phases`` (starting ``start_date``/``now``) or around ``from_subscription``."""
    if "from_subscription" in params:
        if set(params) & {"customer", "phases", "start_date", "end_behavior"}:
            raise invalid("You cannot set `customer`, `phases`, `start_date` or `end_behavior` when "
                          "`from_subscription` is set.", param="from_subscription")
        sub = ctx.get("subscription", params["from_subscription"], param="from_subscription")
        if sub.get("schedule"):
            raise invalid(f"You cannot migrate a subscription that is already attached to a schedule: "
                          f"`{sub['schedule']}`.", param="from_subscription")
        customer = ctx.get("customer", sub["customer"])
        now = billing_time.clock_now(ctx, sub.get("test_clock"))
        phase = _phases(ctx, [{"items": [{"price": i["price"], "quantity": i["quantity"]} for i in sub["_items"]],
                               "end_date": str(sub["_period_end"])}], sub["_period_start"])
        sched = _shape(ctx, customer, phase, params, now)
        sched.update(status="active", subscription=sub["id"],
                     current_phase={"end_date": sub["_period_end"], "start_date": sub["_period_start"]})
        sub["schedule"] = sched["id"]
        ctx.save(sub)
    else:
        if "customer" not in params:
            raise invalid("Missing required param: customer.", param="customer", code="parameter_missing")
        if not params.get("phases"):
            raise invalid("Missing required param: phases.", param="phases", code="parameter_missing")
        customer = ctx.get("customer", params["customer"], param="customer")
        now = billing_time.clock_now(ctx, customer.get("test_clock"))
        start = params.get("start_date", "now")
        start_at = now if start == "now" else int(start) if start.isdigit() else None
        if start_at is None:
            raise invalid("Invalid start_date: must be a Unix timestamp or `now`.", param="start_date")
        sched = _shape(ctx, customer, _phases(ctx, params["phases"], start_at), params, now)
        if start_at <= now:
            _start(billing_time.at(ctx, now), sched, now)
    ctx.save(sched)
    ctx.emit("subscription_schedule.created", sched)
    return sched


@resource.route("GET", "/v1/subscription_schedules/{id}")
def retrieve(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Retrieve a schedule."""
    return ctx.get("subscription_schedule", id)


@resource.route("GET", "/v1/subscription_schedules", params={**LIST_PARAMS, "customer": Str()})
def list_schedules(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """List schedules, optionally for one customer."""
    return ctx.list_page("subscription_schedule", params, "/v1/subscription_schedules",
                         where=lambda s: "customer" not in params or s["customer"] == params["customer"])


@resource.route("POST", "/v1/subscription_schedules/{id}", params={
    "phases": Array(PHASE), "end_behavior": END_BEHAVIOR, "metadata": Metadata(),
    "proration_behavior": changes.PRORATION, "default_settings": Hash({}, emptyable=True)})
def update(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Replace phases (the current one keeps its start), ``end_behavior`` or metadata."""
    sched = ctx.get("subscription_schedule", id)
    before = ctx.get("subscription_schedule", id)
    if sched["status"] in ("canceled", "completed", "released"):
        raise invalid(f"You cannot update a subscription schedule that is {sched['status']}.")
    if "phases" in params:
        start = sched["phases"][sched["_phase"]]["start_date"]
        sched["phases"] = sched["phases"][:sched["_phase"]] + _phases(ctx, params["phases"], start)
    if "end_behavior" in params:
        sched["end_behavior"] = params["end_behavior"]
    if "metadata" in params:
        sched["metadata"] = apply_metadata(sched["metadata"], params["metadata"])
    ctx.save(sched)
    ctx.emit("subscription_schedule.updated", sched, previous=before)
    return sched


def _stop(ctx: RequestContext, id: str, status: str) -> dict[str, Any]:
    sched = ctx.get("subscription_schedule", id)
    if sched["status"] not in ("active", "not_started"):
        raise invalid(f"You cannot {'cancel' if status == 'canceled' else 'release'} a subscription schedule that "
                      f"is {sched['status']}.")
    sub = ctx.find("subscription", sched.get("subscription") or "")
    now = billing_time.clock_now(ctx, sched.get("test_clock"))
    if status == "canceled":
        if sub and sub["status"] != "canceled":
            cycle.end(billing_time.at(ctx, now), sub, now, "cancellation_requested")
        sched.update(status="canceled", canceled_at=now, current_phase=None)
    else:
        sched.update(status="released", released_at=now, released_subscription=sched["subscription"],
                     subscription=None, current_phase=None)
        if sub:
            sub = ctx.get("subscription", sub["id"])
            sub["schedule"] = None
            ctx.save(sub)
    ctx.save(sched)
    ctx.emit(f"subscription_schedule.{status}", sched)
    return sched


@resource.route("POST", "/v1/subscription_schedules/{id}/cancel", params={"invoice_now": Str(), "prorate": Str()})
def cancel(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Cancel the schedule and its subscription."""
    return _stop(ctx, id, "canceled")


@resource.route("POST", "/v1/subscription_schedules/{id}/release", params={"preserve_cancel_date": Str()})
def release(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Release the subscription from the schedule (it keeps running)."""
    return _stop(ctx, id, "released")
