"""Billing meters and meter events: usage a metered price (``recurring.meter``) bills in arrears.

``POST /v1/billing/meters`` (``event_name``, ``default_aggregation.formula`` sum / count / last, customer mapping,
value settings), retrieve, list, update, deactivate, reactivate, ``event_summaries``; ``POST
/v1/billing/meter_events`` records one usage event for an active meter (an unknown ``event_name``, a missing customer
or a non-numeric value is answered 400 and nothing is stored). ``usage`` is what billing asks for one period.
"""

from __future__ import annotations

from typing import Any

from stripebench_emulator.model.context import LIST_PARAMS, RequestContext
from stripebench_emulator.model.errors import StripeError, invalid
from stripebench_emulator.model.params import AnyHash, Enum, Hash, Int, Str
from stripebench_emulator.model.registry import Resource
from stripebench_emulator.rules import billing_time, metering

resource = Resource("billing.meter", prefix="mtr", noun="billing meter")
event_resource = Resource("billing.meter_event", noun="meter event")
summary_resource = Resource("billing.meter_event_summary", prefix="mtrusg", noun="meter event summary")
EVENT_WINDOW_PAST = 35 * billing_time.DAY  # Stripe accepts events from the past 35 days…
EVENT_WINDOW_FUTURE = 5 * 60  # …and up to five minutes ahead


@resource.route("POST", "/v1/billing/meters", params={
    "display_name": Str(required=True, max_length=250), "event_name": Str(required=True, max_length=100),
    "default_aggregation": Hash({"formula": Enum("count", "last", "sum", required=True)}, required=True),
    "customer_mapping": Hash({"event_payload_key": Str(required=True), "type": Enum("by_id", required=True)}),
    "value_settings": Hash({"event_payload_key": Str(required=True)}),
    "event_time_window": Enum("day", "hour")})
def create(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create an active meter; ``event_name`` must be unique among active meters."""
    for meter in ctx.store.scan("billing.meter"):
        if meter["event_name"] == params["event_name"] and meter["status"] == "active":
            raise invalid(f"An active meter with event_name `{params['event_name']}` already exists.",
                          param="event_name")
    now = ctx.now()
    obj = {"id": ctx.new_id("mtr"), "object": "billing.meter", "created": now,
           "customer_mapping": params.get("customer_mapping") or {"event_payload_key": "stripe_customer_id",
                                                                  "type": "by_id"},
           "default_aggregation": params["default_aggregation"], "display_name": params["display_name"],
           "event_name": params["event_name"], "event_time_window": params.get("event_time_window"),
           "livemode": False, "status": "active", "status_transitions": {"deactivated_at": None}, "updated": now,
           "value_settings": params.get("value_settings") or {"event_payload_key": "value"}}
    ctx.save(obj)
    return obj


@resource.route("GET", "/v1/billing/meters/{id}")
def retrieve(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Retrieve a meter."""
    return ctx.get("billing.meter", id)


@resource.route("GET", "/v1/billing/meters", params={**LIST_PARAMS, "status": Enum("active", "inactive")})
def list_meters(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """List meters, optionally by status."""
    return ctx.list_page("billing.meter", params, "/v1/billing/meters",
                         where=lambda m: "status" not in params or m["status"] == params["status"])


@resource.route("POST", "/v1/billing/meters/{id}", params={"display_name": Str(max_length=250)})
def update(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Rename a meter (nothing else about it changes)."""
    meter = ctx.get("billing.meter", id)
    if "display_name" in params:
        meter.update(display_name=params["display_name"], updated=ctx.now())
    ctx.save(meter)
    return meter


def _set_status(ctx: RequestContext, id: str, status: str) -> dict[str, Any]:
    meter = ctx.get("billing.meter", id)
    if meter["status"] == status:
        raise invalid(f"This meter is already {status}.")
    now = ctx.now()
    meter.update(status=status, updated=now,
                 status_transitions={"deactivated_at": now if status == "inactive" else None})
    ctx.save(meter)
    return meter


@resource.route("POST", "/v1/billing/meters/{id}/deactivate")
def deactivate(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Stop accepting events for a meter."""
    return _set_status(ctx, id, "inactive")


@resource.route("POST", "/v1/billing/meters/{id}/reactivate")
def reactivate(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Accept events again."""
    return _set_status(ctx, id, "active")


@event_resource.renderer
def render_event(obj: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """Meter events have no ``id`` on Stripe; ``identifier`` names them."""
    obj.pop("id", None)
    return obj


@event_resource.route("POST", "/v1/billing/meter_events", params={
    "event_name": Str(required=True, max_length=100), "payload": AnyHash(Str(), required=True),
    "identifier": Str(max_length=100), "timestamp": Int()})
def create_event(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Record usage for the active meter with this ``event_name``."""
    meter = next((m for m in ctx.store.scan("billing.meter")
                  if m["event_name"] == params["event_name"] and m["status"] == "active"), None)
    if meter is None:
        raise StripeError(f"No active meter was found that matches the event_name `{params['event_name']}`.",
                          param="event_name", code="resource_missing", status=400)
    payload = params["payload"]
    customer_key = meter["customer_mapping"]["event_payload_key"]
    value_key = meter["value_settings"]["event_payload_key"]
    if not payload.get(customer_key):
        raise invalid(f"The meter event payload is missing the customer mapping key `{customer_key}`.",
                      param=f"payload[{customer_key}]", code="meter_event_no_customer_defined")
    customer = ctx.get("customer", payload[customer_key], param=f"payload[{customer_key}]")
    if meter["default_aggregation"]["formula"] != "count" and metering.meter_value(payload.get(value_key)) is None:
        raise invalid(f"The meter event payload value `{value_key}` must be a number, got "
                      f"{payload.get(value_key)!r}.", param=f"payload[{value_key}]",
                      code="meter_event_invalid_value")
    now = billing_time.clock_now(ctx, customer.get("test_clock"))
    timestamp = params.get("timestamp", now)
    if not now - EVENT_WINDOW_PAST <= timestamp <= now + EVENT_WINDOW_FUTURE:
        raise invalid("The timestamp must be within the past 35 calendar days or up to 5 minutes in the future.",
                      param="timestamp", code="timestamp_too_far_in_past" if timestamp < now else
                      "timestamp_in_future")
    identifier = params.get("identifier") or ctx.emulator.ids.token("meter_event", 20)
    if ctx.find("billing.meter_event", identifier) is not None:
        raise invalid(f"An event with identifier `{identifier}` already exists.", param="identifier",
                      code="duplicate_meter_event")
    obj = {"id": identifier, "object": "billing.meter_event", "created": now, "event_name": params["event_name"],
           "identifier": identifier, "livemode": False, "payload": payload, "timestamp": timestamp,
           "_meter": meter["id"], "_customer": customer["id"]}
    ctx.save(obj)
    return obj


@summary_resource.route("GET", "/v1/billing/meters/{id}/event_summaries", params={
    **LIST_PARAMS, "customer": Str(required=True), "start_time": Int(required=True), "end_time": Int(required=True),
    "value_grouping_window": Enum("day", "hour")})
def event_summaries(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """The customer's usage over ``[start_time, end_time)`` as one summary."""
    meter = ctx.get("billing.meter", id)
    ctx.get("customer", params["customer"], param="customer")
    total = metering.usage(ctx, meter["id"], params["customer"], params["start_time"], params["end_time"])
    row = {"id": "mtrusg_" + ctx.emulator.ids.token("summary", 20), "object": "billing.meter_event_summary",
           "aggregated_value": total, "end_time": params["end_time"], "livemode": False, "meter": meter["id"],
           "start_time": params["start_time"]}
    return {"object": "list", "data": [row], "has_more": False, "url": f"/v1/billing/meters/{id}/event_summaries"}
