"""Usage-based billing's arithmetic: a meter event's value, and a meter's aggregate for a customer over a period
(what a metered price bills in arrears and what ``event_summaries`` reports)."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from stripebench_emulator.model.context import RequestContext


def meter_value(raw: object) -> Decimal | None:
    try:
        value = Decimal(str(raw))
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


def usage(ctx: RequestContext, meter_id: str, customer_id: str, start: int, end: int) -> float:
    """The meter's aggregate for ``customer_id`` over ``[start, end)`` (sum, count or last value)."""
    meter = ctx.find("billing.meter", meter_id)
    if meter is None:
        return 0
    key = meter["value_settings"]["event_payload_key"]
    events = sorted((e for e in ctx.store.scan("billing.meter_event")
                     if e["_meter"] == meter_id and e["_customer"] == customer_id and start <= e["timestamp"] < end),
                    key=lambda e: (e["timestamp"], ctx.store.seq_of("billing.meter_event", e["id"])))
    formula = meter["default_aggregation"]["formula"]
    if formula == "count":
        return len(events)
    values = [meter_value(e["payload"].get(key)) or Decimal(0) for e in events]
    if formula == "last":
        return float(values[-1]) if values else 0
    return float(sum(values, Decimal(0)))
