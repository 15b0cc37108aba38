"""A new subscription's first period and first invoice: trials, billing-cycle anchors, ``payment_behavior``.

``first_invoice`` bills what the subscription owes at its start: nothing during a trial (a $0 invoice, paid), the
prorated part up to a ``billing_cycle_anchor`` (or nothing with ``proration_behavior=none``), else the full first
period, plus ``add_invoice_items``. With ``collection_method=send_invoice`` it stays a draft for an hour
(``automatically_finalizes_at``), as on Stripe, and the subscription is active at once. ``payment_behavior``:
``allow_incomplete`` (default) leaves a declined subscription ``incomplete``; ``error_if_incomplete`` answers the
card error and creates nothing; ``default_incomplete`` leaves the invoice open with an unconfirmed PaymentIntent
(paying it activates the sub).
"""

from __future__ import annotations

from datetime import UTC
from typing import Any

from stripebench_emulator.model.context import RequestContext
from stripebench_emulator.model.errors import StripeError, invalid
from stripebench_emulator.rules import billing_changes as changes
from stripebench_emulator.rules import billing_cycle as cycle
from stripebench_emulator.rules import billing_time

NO_PAYMENT_METHOD = ("This customer has no attached payment source or default payment method. Please consider "
                     "adding a default payment method. For more information, visit "
                     "https://docs.stripe.com/billing/subscriptions/payment-methods-setting#payment-method-priority.")


def trial_end_from(ctx: RequestContext, params: dict[str, Any], prices: list[dict[str, Any]], now: int
                   ) -> int | None:
    """When the trial ends (``trial_end``, ``trial_period_days`` or ``trial_from_plan``), or None."""
    if "trial_end" in params and "trial_period_days" in params:
        raise invalid("You may only specify one of these parameters: trial_end, trial_period_days.",
                      param="trial_end")
    if params.get("trial_end") == "now":
        return None
    if "trial_end" in params:
        if not str(params["trial_end"]).isdigit():
            raise invalid("Invalid timestamp: must be an integer Unix timestamp or `now`.", param="trial_end")
        end = int(params["trial_end"])
        if end <= now:
            raise invalid("Invalid timestamp: must be an integer Unix timestamp in the future.", param="trial_end")
        return end
    if params.get("trial_period_days"):
        return now + params["trial_period_days"] * billing_time.DAY
    if params.get("trial_from_plan"):
        days = max((p["recurring"] or {}).get("trial_period_days") or 0 for p in prices)
        return now + days * billing_time.DAY if days else None
    return None


def anchor_from(params: dict[str, Any], now: int, interval: tuple[str, int]) -> int | None:
    """The ``billing_cycle_anchor`` asked for (a time or ``billing_cycle_anchor_config``), checked like Stripe."""
    if "billing_cycle_anchor" in params and "billing_cycle_anchor_config" in params:
        raise invalid("You may only specify one of these parameters: billing_cycle_anchor, "
                      "billing_cycle_anchor_config.", param="billing_cycle_anchor")
    if "billing_cycle_anchor_config" in params:
        return cycle.anchor_from_config(now, params["billing_cycle_anchor_config"])
    anchor = params.get("billing_cycle_anchor")
    if anchor is None:
        return None
    if anchor < now:
        raise invalid("Invalid timestamp: must be an integer Unix timestamp in the future.",
                      param="billing_cycle_anchor")
    natural = billing_time.period_end(now, interval[0], interval[1])
    if anchor > natural:
        raise invalid(f"billing_cycle_anchor cannot be later than next natural billing date ({natural}) for plan",
                      param="billing_cycle_anchor")
    return anchor if anchor > now else None


def _zero(line: dict[str, Any], description: str) -> dict[str, Any]:
    return {**line, "amount": 0, "description": description}


def first_lines(ctx: RequestContext, sub: dict[str, Any], params: dict[str, Any], now: int) -> list[dict[str, Any]]:
    """What the first invoice bills (see module doc)."""
    interval = cycle.interval_of(ctx, sub)
    lines = cycle.cycle_lines(ctx, sub, now, sub["_period_end"])
    if sub["status"] == "trialing":
        lines = [_zero(line, f"Trial period for {line['description'].split(' (at ')[0].split(' × ', 1)[1]}")
                 for line in lines]
    elif sub["_period_end"] != billing_time.period_end(now, *interval):  # an anchor: the first period is a part one
        natural_start = sub["_period_end"]
        # the full period ending at the anchor, to prorate per second of it
        for _ in range(interval[1]):
            natural_start = _back(natural_start, interval[0])
        share = (sub["_period_end"] - now) / max(sub["_period_end"] - natural_start, 1)
        none = params.get("proration_behavior") == "none"
        # the subscription's discount takes its share off this first part period too (a published benchmark's
        # anchored, discounted subscription bills less than the full discounted month on Stripe)
        lines = [{**line, "proration": True, "discountable": True, "amount": 0 if none else round(line["amount"] * share),
                  "description": f"Remaining time on {line['description'].split(' (at ')[0].split(' × ', 1)[1]} "
                                 f"after {changes._day(now)}"} for line in lines]
    return lines + changes.invoice_item_lines(ctx, sub, params.get("add_invoice_items") or [], now)


def _back(moment: int, interval: str) -> int:
    """``moment`` moved back by one ``interval``."""
    import calendar
    from datetime import datetime

    if interval in ("day", "week"):
        return moment - (billing_time.DAY if interval == "day" else 7 * billing_time.DAY)
    when = datetime.fromtimestamp(moment, UTC)
    year, month = (when.year - 1, when.month) if interval == "year" else \
        ((when.year - 1, 12) if when.month == 1 else (when.year, when.month - 1))
    return int(when.replace(year=year, month=month, day=min(when.day, calendar.monthrange(year, month)[1]))
               .timestamp())


def first_invoice(ctx: RequestContext, sub: dict[str, Any], params: dict[str, Any], now: int) -> StripeError | None:
    """Bill the first invoice and set the status; a card error to answer when ``error_if_incomplete``."""
    behavior = params.get("payment_behavior", "allow_incomplete")
    lines = first_lines(ctx, sub, params, now)
    owes = sum(line["amount"] for line in lines) > 0
    # A schedule's subscription starts with its first invoice a draft, finalised (and charged) an hour later, as a
    # renewal's: no payment method is needed yet (the page can pay the invoice once it is finalised).
    scheduled = bool(params.get("_from_schedule"))
    if (owes and sub["collection_method"] == "charge_automatically" and behavior != "default_incomplete"
            and not scheduled and not cycle.payment_method_for(ctx, sub)):
        raise invalid(NO_PAYMENT_METHOD)
    moved = billing_time.at(ctx, now)
    if sub["collection_method"] == "send_invoice" or scheduled:
        # Stripe finalises a sent subscription's first invoice an hour after making it (a test clock's advance,
        # ``POST /v1/invoices/{id}/finalize`` or ``/send`` may do it first); one with nothing due is finalised, and
        # so paid, at once as before (Stripe's docs say nothing of a $0 one)
        invoice = cycle.draft(moved, sub, lines, "subscription_create", now,
                              finalizes_at=now + cycle.bills.FINALIZE_DELAY)
        if not invoice["automatically_finalizes_at"]:
            cycle.bills.finalize(moved, invoice, now)
        sub["status"] = sub["status"] if sub["status"] == "trialing" else "active"
        return None
    invoice = cycle.draft(moved, sub, lines, "subscription_create", now)
    error = cycle.collect(moved, sub, invoice, now, behavior)
    invoice = ctx.get("invoice", invoice["id"])
    if invoice["status"] == "paid":
        sub["status"] = "trialing" if sub["trial_end"] else "active"
        return None
    if error is not None and behavior == "error_if_incomplete":
        raise error
    sub["status"] = "incomplete"
    return None
