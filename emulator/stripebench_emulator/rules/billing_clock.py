"""What a subscription does on its own as time passes, one action at a time: the trial's end and its notice,
renewals and their ``invoice.upcoming`` notice, cancellation at ``cancel_at``, an incomplete subscription expiring.

``api/test_clocks.py`` (and the account's own clock, ``account_clock``) asks ``next_action`` what falls due
next and runs it with ``run_action`` at that moment, in time order.
"""

from __future__ import annotations

from typing import Any

from stripebench_emulator.model.context import RequestContext
from stripebench_emulator.rules import billing_cycle as cycle
from stripebench_emulator.rules.billing_preview import preview
from stripebench_emulator.rules.billing_time import DAY, at

TRIAL_WILL_END_NOTICE = 3 * DAY  # customer.subscription.trial_will_end comes three days before the trial ends


# "If the first invoice is not paid within 23 hours, the subscription transitions to incomplete_expired" (the
# subscription status reference), counted from the subscription's creation
INCOMPLETE_EXPIRES_AFTER = 23 * 3600


# invoice.upcoming "occurs X number of days before a subscription is scheduled to create an invoice that is
# automatically charged—where X is determined by your subscriptions settings" (the Dashboard's "Upcoming renewal
# events"). The default X is not in Stripe's API reference; 7 days is what integrations report seeing.
UPCOMING_NOTICE = 7 * DAY


# -- what happens over time ---------------------------------------------------------------------------------------
def next_action(sub: dict[str, Any]) -> tuple[int, str] | None:
    """The next moment something happens to ``sub`` on its own, and what (None when nothing ever will)."""
    status = sub["status"]
    if status in ("canceled", "incomplete_expired", "paused"):
        return None
    if status == "incomplete":  # nothing else happens until the first invoice is paid
        return sub["created"] + INCOMPLETE_EXPIRES_AFTER, "expire"
    candidates: list[tuple[int, str]] = []
    if status == "trialing" and sub["trial_end"]:
        if not sub.get("_trial_notice_sent") and sub["trial_end"] - TRIAL_WILL_END_NOTICE > sub["_period_start"]:
            candidates.append((sub["trial_end"] - TRIAL_WILL_END_NOTICE, "trial_will_end"))
        candidates.append((sub["trial_end"], "trial_end"))
    if sub.get("cancel_at") and status != "incomplete":
        candidates.append((sub["cancel_at"], "cancel"))
    renewal = _renewal(sub)
    if renewal is not None and sub.get("_upcoming_for") != renewal and renewal - UPCOMING_NOTICE > sub["_period_start"]:
        candidates.append((renewal - UPCOMING_NOTICE, "upcoming"))
    if status in ("active", "past_due", "unpaid"):
        candidates.append((sub["_period_end"], "renew"))
    return min(candidates) if candidates else None


def _renewal(sub: dict[str, Any]) -> int | None:
    """When ``sub`` next makes an invoice charged automatically (its trial's end or its period's), if it will."""
    status = sub["status"]
    if status not in ("active", "past_due", "trialing") or sub["collection_method"] != "charge_automatically":
        return None
    renewal = sub["trial_end"] if status == "trialing" else sub["_period_end"]
    if not renewal or (sub.get("cancel_at") and sub["cancel_at"] <= renewal):
        return None  # it ends first
    return renewal


def upcoming(ctx: RequestContext, sub: dict[str, Any]) -> None:
    """``invoice.upcoming`` for the renewal ``UPCOMING_NOTICE`` ahead: the invoice it will make (as
    ``create_preview`` shows it), without an id, as Stripe sends it."""
    sub["_upcoming_for"] = _renewal(sub)
    ctx.save(sub)
    invoice = preview(ctx, sub, {})
    invoice["_upcoming_event"] = True  # rendered without ``id`` (see ``invoices.render``)
    ctx.emit("invoice.upcoming", invoice)


def run_action(ctx: RequestContext, sub: dict[str, Any], action: str, now: int) -> None:
    """Do ``action`` (from ``next_action``) to ``sub`` at ``now``."""
    moved = at(ctx, now)
    if action == "trial_will_end":
        sub["_trial_notice_sent"] = True
        ctx.save(sub)
        ctx.emit("customer.subscription.trial_will_end", sub)
    elif action == "cancel":
        cycle.end(moved, sub, now, "cancellation_requested")
    elif action == "expire":
        cycle.expire(moved, sub, now)
    elif action == "upcoming":
        upcoming(moved, sub)
    elif action == "trial_end":
        cycle.end_trial(ctx, sub, now)
    else:  # "renew"
        cycle.renew(ctx, sub, now)
