"""The invoice a subscription would make: after a change (``create_preview`` with update params), or at its next
renewal (``create_preview``, ``upcoming``, ``invoice.upcoming``), built and never saved."""

from __future__ import annotations

from typing import Any

from stripebench_emulator.model.context import RequestContext
from stripebench_emulator.rules import billing_cycle as cycle
from stripebench_emulator.rules import billing_invoice as bills
from stripebench_emulator.rules import billing_time, billing_update


def preview(ctx: RequestContext, sub: dict[str, Any], change: dict[str, Any]) -> dict[str, Any]:
    """The invoice ``change`` (update params) would make now, else the next renewal's, unsaved."""
    now = billing_time.clock_now(ctx, sub.get("test_clock"))
    draft = dict(sub)
    draft["_pending_lines"] = list(sub.get("_pending_lines") or [])
    if change:
        billing_update.apply(billing_time.at(ctx, now), draft, change, now, bill=False)
    pending = draft.pop("_pending_lines")
    if draft.pop("_bill_now", False):
        lines, moment, reason = pending, now, "subscription_update"
    else:
        start = draft["trial_end"] if draft["status"] == "trialing" else draft["_period_end"]
        finish = billing_time.period_end(start, *cycle.interval_of(ctx, draft))
        lines = pending + cycle.usage_lines(ctx, draft, draft["_period_start"], start) + \
            cycle.cycle_lines(ctx, draft, start, finish)
        moment, reason = start, "subscription_cycle"
    invoice = bills.build_invoice(ctx, draft, lines, reason=reason, now=moment,
                                  discount_id=cycle.discount_in_force(ctx, draft, moment), save=False)
    invoice["automatically_finalizes_at"] = None
    invoice["_preview"] = True
    return invoice
