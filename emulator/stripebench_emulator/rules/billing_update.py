"""Applying a subscription update's billing params: items with prorations, anchor resets, trials, discounts.

A price with another interval, or ``billing_cycle_anchor=now``, starts a new period at once and invoices it
(``subscription_update``) with the unused time of the old one credited. Otherwise a change within a paid period
makes proration lines per ``proration_behavior`` (``proration_date`` moves the moment they are computed for).
``payment_behavior=error_if_incomplete`` answers a declined immediate invoice with the card error and changes
nothing; the default leaves the invoice open and the subscription ``past_due``.
"""

from __future__ import annotations

from typing import Any

from stripebench_emulator.model.context import RequestContext
from stripebench_emulator.model.errors import StripeError, invalid
from stripebench_emulator.rules import billing_changes as changes
from stripebench_emulator.rules import billing_cycle as cycle
from stripebench_emulator.rules import billing_tax, billing_time


def _preview_guard(sub: dict[str, Any], params: dict[str, Any]) -> None:
    if sub["status"] == "incomplete" and "items" in params:
        raise invalid("The subscription is incomplete: pay or cancel its first invoice before changing its items.",
                      param="items")


def apply(ctx: RequestContext, sub: dict[str, Any], params: dict[str, Any], now: int, *, bill: bool = True
          ) -> StripeError | None:
    """Apply the billing side of an update to ``sub`` (not saved); the error to answer, if any.

    With ``bill=False`` (previews) nothing is invoiced: the lines an immediate invoice would carry are left in
    ``sub["_pending_lines"]`` and ``sub["_bill_now"]`` says whether that invoice would be made.
    """
    _preview_guard(sub, params)
    behavior = params.get("proration_behavior", "create_prorations")
    moment = params.get("proration_date", now)
    old_items = [dict(i) for i in sub["_items"]]
    old_interval = cycle.interval_of(ctx, sub)
    if "items" in params:
        changes.apply_items(ctx, sub, params["items"], now)
    if "discounts" in params:
        changes.discounts_from(ctx, sub, params["discounts"], now)
    if "default_tax_rates" in params:  # before anything is invoiced below: its invoice copies them
        sub["default_tax_rates"] = billing_tax.rates_from(ctx, params["default_tax_rates"], "default_tax_rates")
    if params.get("add_invoice_items"):
        sub["_pending_lines"] = (sub.get("_pending_lines") or []) + changes.invoice_item_lines(
            ctx, sub, params["add_invoice_items"], now)
    if "trial_end" in params and params["trial_end"] == "now" and not bill and sub["status"] == "trialing":
        end = billing_time.period_end(now, *cycle.interval_of(ctx, sub))  # the invoice ending the trial would make
        sub.update(status="active", trial_end=now, _period_start=now, _period_end=end, _bill_now=True)
        sub["_pending_lines"] = (sub.get("_pending_lines") or []) + cycle.cycle_lines(ctx, sub, now, end)
        return None
    if "trial_end" in params:
        _trial(ctx, sub, params["trial_end"], now)
        return None
    reset = params.get("billing_cycle_anchor") == "now" or cycle.interval_of(ctx, sub) != old_interval
    in_trial = sub["status"] == "trialing"
    lines: list[dict[str, Any]] = []
    if not in_trial and behavior != "none":
        lines = changes.proration_lines(ctx, sub, old_items, sub["_items"], moment)
    if reset and not in_trial:
        if behavior != "none":  # the whole old remainder is credited, not only changed items
            lines = [line for line in changes.proration_lines(ctx, sub, old_items, [], moment)]
        interval = cycle.interval_of(ctx, sub)
        sub["billing_cycle_anchor"], sub["_period_start"] = now, now
        sub["_period_end"] = billing_time.period_end(now, *interval)
        lines += cycle.cycle_lines(ctx, sub, now, sub["_period_end"])
    if not lines:
        return None
    immediate = reset or behavior == "always_invoice"
    sub["_pending_lines"] = (sub.get("_pending_lines") or []) + lines if not immediate else \
        lines + (sub.get("_pending_lines") or [])
    sub["_bill_now"] = immediate
    if not immediate or not bill:
        return None
    sub.pop("_bill_now", None)
    pending, sub["_pending_lines"] = sub["_pending_lines"], []
    invoice = cycle.draft(ctx, sub, pending, "subscription_update", now)  # its discounts may run out or be spent
    sub["latest_invoice"] = invoice["id"]
    ctx.save(sub)  # collect() reads the subscription's payment method from storage
    pay = params.get("payment_behavior", "allow_incomplete")
    error = cycle.collect(ctx, sub, invoice, now, "allow_incomplete" if pay == "default_incomplete" else pay)
    if error is not None and pay == "error_if_incomplete":
        raise error
    if error is not None:
        sub["status"] = "past_due"
    return None


def _trial(ctx: RequestContext, sub: dict[str, Any], value: str, now: int) -> None:
    """``trial_end``: ``now`` ends the trial (billing at once); a time extends or starts one."""
    if value == "now":
        if sub["status"] == "trialing":
            sub["trial_end"] = now
            cycle.end_trial(ctx, sub, now)
            invoice = ctx.get("invoice", sub["latest_invoice"])
            ctx.save(sub)
            cycle.finalize_due(ctx, invoice, now)
            sub.update(ctx.get("subscription", sub["id"]))
        return
    if not value.isdigit() or int(value) <= now:
        raise invalid("Invalid timestamp: must be an integer Unix timestamp in the future.", param="trial_end")
    end = int(value)
    sub.update(status="trialing", trial_end=end, trial_start=sub.get("trial_start") or now, _period_end=end,
               billing_cycle_anchor=end, _trial_notice_sent=False)
