"""Billing over time: a subscription's lines, discounts, first invoice, renewals, trial ends and cancellations.

Everything takes the moment it happens at (``now``): a subscription of a customer on a test clock lives on the
clock's frozen time; what falls due as time passes is dispatched by ``billing_clock``. Invoices are built by
``billing_invoice``.

Stripe's order, reproduced here: a renewal makes the draft invoice (``invoice.created``), moves the period
(``customer.subscription.updated``) and about an hour later finalises it (``invoice.finalized``), charges the
default payment method (``payment_intent.created``, ``charge.succeeded``, ``payment_intent.succeeded``) and marks it
paid (``invoice.paid``, ``invoice.payment_succeeded``); a decline gives ``invoice.payment_failed`` and ``past_due``.
A week ahead of a renewal (or trial end) charged automatically comes ``invoice.upcoming``; before a trial's end,
``customer.subscription.trial_will_end`` three days ahead. An ``incomplete`` subscription whose first invoice stays
unpaid for 23 hours becomes ``incomplete_expired`` and that invoice is voided.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

from stripebench_emulator.model.context import RequestContext
from stripebench_emulator.model.errors import StripeError
from stripebench_emulator.rules import billing_discounts, invoice_lifecycle, metering
from stripebench_emulator.rules import billing_invoice as bills
from stripebench_emulator.rules.billing_time import at, period_end


def interval_of(ctx: RequestContext, sub: dict[str, Any]) -> tuple[str, int]:
    """The billing interval of the subscription's (first recurring) price."""
    for item in sub["_items"]:
        recurring = (ctx.find("price", item["price"]) or {}).get("recurring")
        if recurring:
            return recurring["interval"], recurring.get("interval_count", 1)
    return "month", 1


def _unit(price: dict[str, Any]) -> float:
    if price.get("unit_amount") is not None:
        return price["unit_amount"]
    return float(price.get("unit_amount_decimal") or 0)


def describe(ctx: RequestContext, price: dict[str, Any], quantity: float) -> str:
    """Stripe's line description: ``1 × Pro (at $20.00 / month)``."""
    product = ctx.find("product", price.get("product", "")) or {}
    recurring = price.get("recurring") or {}
    return (f"{quantity} × {product.get('name', 'Item')} (at ${_unit(price) / 100:.2f} / "
            f"{recurring.get('interval', 'one time')})")


def billed_quantity(price: dict[str, Any], quantity: float) -> float:
    """The quantity a price charges for: ``transform_quantity`` divides it and rounds up or down (Stripe's "package"
    pricing), else the quantity itself."""
    transform = price.get("transform_quantity")
    if not transform:
        return quantity
    parts = quantity / transform["divide_by"]
    return math.ceil(parts) if transform["round"] == "up" else math.floor(parts)


def item_amount(ctx: RequestContext, item: dict[str, Any]) -> int:
    """A licensed item's charge for one full period."""
    price = ctx.get("price", item["price"])
    return round(_unit(price) * billed_quantity(price, item.get("quantity") or 0))


def is_metered(ctx: RequestContext, item: dict[str, Any]) -> bool:
    return ((ctx.find("price", item["price"]) or {}).get("recurring") or {}).get("usage_type") == "metered"


def cycle_lines(ctx: RequestContext, sub: dict[str, Any], start: int, end: int) -> list[dict[str, Any]]:
    """Lines for licensed items over ``[start, end)``, billed in advance."""
    lines = []
    for item in sub["_items"]:
        if is_metered(ctx, item):
            continue
        price = ctx.get("price", item["price"])
        lines.append({"amount": item_amount(ctx, item), "price": price["id"], "quantity": item["quantity"],
                      "period": [start, end], "item": item["id"], "proration": False,
                      "description": describe(ctx, price, item["quantity"]), "tax_rates": item.get("tax_rates")})
    return lines


def usage_lines(ctx: RequestContext, sub: dict[str, Any], start: int, end: int) -> list[dict[str, Any]]:
    """Lines for metered items: the meter's usage by this customer over ``[start, end)``, billed in arrears."""
    lines = []
    for item in sub["_items"]:
        if not is_metered(ctx, item):
            continue
        price = ctx.get("price", item["price"])
        meter = price["recurring"].get("meter")
        used = metering.usage(ctx, meter, sub["customer"], start, end) if meter else 0
        quantity = int(used) if float(used).is_integer() else used
        lines.append({"amount": round(_unit(price) * billed_quantity(price, used)), "price": price["id"], "quantity": quantity,
                      "period": [start, end], "item": item["id"], "proration": False,
                      "description": describe(ctx, price, quantity), "tax_rates": item.get("tax_rates")})
    return lines


def discount_in_force(ctx: RequestContext, sub: dict[str, Any], now: int) -> str | None:
    """The id of the discount an invoice of ``sub`` made at ``now`` takes off: the subscription's own, else its
    customer's (``billing_discounts.applicable``). How much it takes off which line is ``billing_invoice``'s
    (``discount_amounts``: not prorations, and with ``applies_to.products`` only lines of those products)."""
    entry = billing_discounts.applicable(ctx, sub, now)
    return entry["id"] if entry is not None and ctx.find("discount", entry["id"]) is not None else None


def discount_used(sub: dict[str, Any], discount_id: str | None) -> None:
    """The subscription's discount ``discount_id`` has been taken off an invoice (a ``once`` one is then spent)."""
    billing_discounts.spent(sub, discount_id)


def payment_method_for(ctx: RequestContext, sub: dict[str, Any]) -> str | None:
    """The subscription's ``default_payment_method``, else the customer's invoice default."""
    if sub.get("default_payment_method"):
        return sub["default_payment_method"]
    customer = ctx.find("customer", sub["customer"]) or {}
    return (customer.get("invoice_settings") or {}).get("default_payment_method")


def draft(ctx: RequestContext, sub: dict[str, Any], lines: list[dict[str, Any]], reason: str, now: int,
          finalizes_at: int | None = None) -> dict[str, Any]:
    """Save a draft invoice for ``sub`` with its pending prorations and discount; ``sub.latest_invoice`` set
    (``finalizes_at``: see ``billing_invoice.create_draft``)."""
    lines = list(sub.pop("_pending_lines", None) or []) + lines
    sub["_pending_lines"] = []
    billing_discounts.expire(ctx, sub, now)  # what ran out goes first (customer.discount.deleted)
    discount_id = discount_in_force(ctx, sub, now)
    billing_discounts.used(ctx, sub, discount_id)
    invoice = bills.create_draft(ctx, sub, lines, reason=reason, now=now, discount_id=discount_id,
                                 finalizes_at=finalizes_at)
    sub["latest_invoice"] = invoice["id"]
    return invoice


def collect(ctx: RequestContext, sub: dict[str, Any], invoice: dict[str, Any], now: int, behavior: str
            ) -> StripeError | None:
    """Finalise ``invoice`` and pay it per ``payment_behavior``; the subscription's status follows the outcome."""
    moved = at(ctx, now)
    bills.finalize(moved, invoice, now)
    if invoice["status"] == "paid" or invoice["collection_method"] == "send_invoice":
        return None  # a sent invoice is paid by the customer (finalising made its PaymentIntent), never charged
    description = "Subscription creation" if invoice["billing_reason"] == "subscription_create" else \
        "Subscription update" if invoice["billing_reason"] == "subscription_update" else "Subscription cycle"
    if behavior == "default_incomplete":
        bills.open_intent(moved, invoice, description)
        return None
    if ctx.find("subscription", sub["id"]) is not None:
        # a charge here that succeeds pays the invoice (``invoice_lifecycle``'s hooks); this request then reports the
        # subscription's new status itself
        ctx.save({**ctx.get("subscription", sub["id"]), "_settling": True})
    error = bills.attempt(moved, invoice, payment_method_for(ctx, sub), now, description)
    invoice.update(ctx.get("invoice", invoice["id"]))
    settled = ctx.get("subscription", sub["id"])
    settled.pop("_settling", None)
    ctx.save(settled)
    return error


def on_invoice_paid(ctx: RequestContext, invoice: dict[str, Any]) -> None:
    """``invoice_lifecycle.ON_PAID`` hook: a subscription's invoice is paid — by its own PaymentIntent, by attached
    payments or out of band — so an incomplete, past-due or unpaid subscription becomes active."""
    if not invoice.get("_subscription"):
        return
    sub = ctx.get("subscription", invoice["_subscription"])
    before = ctx.get("subscription", sub["id"])
    saved_pm = _save_default_payment_method(ctx, sub, invoice)
    if sub.get("_settling"):  # paid within the request that made the invoice: that request sets the status
        if saved_pm:
            ctx.save(sub)  # and reports the saved payment method with it
        return
    if sub["status"] in ("incomplete", "past_due", "unpaid"):
        sub["status"] = "active"
    if sub["status"] != before["status"] or saved_pm:
        ctx.save(sub)
        ctx.emit("customer.subscription.updated", sub, previous=before)


def _save_default_payment_method(ctx: RequestContext, sub: dict[str, Any], invoice: dict[str, Any]) -> bool:
    """``payment_settings.save_default_payment_method=on_subscription``: the payment method that paid the invoice
    (through a PaymentIntent, not out of band) becomes the subscription's ``default_payment_method``, so renewals
    charge it. Whether it changed."""
    if (sub.get("payment_settings") or {}).get("save_default_payment_method") != "on_subscription":
        return False
    paid = [p for p in invoice.get("_payments") or [] if p["status"] == "paid" and p.get("payment_intent")]
    pi = ctx.find("payment_intent", paid[-1]["payment_intent"]) if paid else None
    pm = (pi or {}).get("payment_method")
    if not pm or pm == sub.get("default_payment_method"):
        return False
    sub["default_payment_method"] = pm
    return True


def end_trial(ctx: RequestContext, sub: dict[str, Any], now: int) -> None:
    """The trial ends at ``now``. Without a payment method, ``trial_settings.end_behavior.missing_payment_method``
    cancels or pauses the subscription; otherwise it becomes active and its first paid period begins (``renew``)."""
    moved = at(ctx, now)
    if not payment_method_for(ctx, sub):
        behavior = (sub["trial_settings"] or {}).get("end_behavior", {}).get("missing_payment_method")
        if behavior == "cancel":
            end(moved, sub, now, "cancellation_requested")
            return
        if behavior == "pause":
            before = ctx.get("subscription", sub["id"])
            sub.update(status="paused", _period_start=now, _period_end=now)
            ctx.save(sub)
            ctx.emit("customer.subscription.paused", sub)
            ctx.emit("customer.subscription.updated", sub, previous=before)
            return
    sub["status"] = "active"
    renew(ctx, sub, now)


def renew(ctx: RequestContext, sub: dict[str, Any], now: int) -> None:
    """A new period begins at ``now``: the ended one's usage and the new one's lines go on a draft invoice that is
    finalised ``FINALIZE_DELAY`` later (``finalize_due``)."""
    moved = at(ctx, now)
    before = ctx.get("subscription", sub["id"])
    start = now
    interval, count = interval_of(ctx, sub)
    finish = period_end(start, interval, count)
    ended = (sub["_period_start"], start)
    sub["_period_start"], sub["_period_end"] = start, finish
    lines = usage_lines(ctx, {**sub}, *ended) + cycle_lines(ctx, sub, start, finish)
    draft(moved, sub, lines, "subscription_cycle", now, finalizes_at=now + bills.FINALIZE_DELAY)
    ctx.save(sub)
    ctx.emit("customer.subscription.updated", sub, previous=before)


def finalize_due(ctx: RequestContext, invoice: dict[str, Any], now: int) -> None:
    """A subscription's draft (a renewal's, or a sent first invoice's) reached ``automatically_finalizes_at``:
    finalise, and charge one charged automatically (a decline makes the sub past_due); a sent one waits for the
    customer."""
    sub = ctx.get("subscription", invoice["_subscription"])
    error = collect(ctx, sub, invoice, now, "allow_incomplete")
    sub = ctx.get("subscription", sub["id"])
    before = ctx.get("subscription", sub["id"])
    if error is not None and sub["status"] in ("active", "trialing"):
        sub["status"] = "past_due"
    elif error is None and sub["status"] in ("incomplete", "past_due", "unpaid"):
        sub["status"] = "active"
    ctx.save(sub)
    ctx.emit("customer.subscription.updated", sub, previous=before)


def expire(ctx: RequestContext, sub: dict[str, Any], now: int) -> None:
    """The first invoice went unpaid for 23 hours: ``incomplete_expired`` (terminal, no more invoices) and the open
    invoice voided.

    Stripe documents the transition and the void, not the order of their events nor whether ``canceled_at`` is
    set: here the subscription's ``customer.subscription.updated`` (``ended_at`` set) comes first, then
    ``invoice.voided``, the order the status reference tells them in."""
    before = ctx.get("subscription", sub["id"])
    sub.update(status="incomplete_expired", ended_at=now)
    ctx.save(sub)
    ctx.emit("customer.subscription.updated", sub, previous=before)
    invoice = ctx.find("invoice", sub.get("latest_invoice") or "")
    if invoice is not None and invoice["status"] == "open":
        invoice_lifecycle.void_invoice(ctx, invoice)


def end(ctx: RequestContext, sub: dict[str, Any], now: int, reason: str) -> None:
    """Cancel now: ``status=canceled``, ``customer.subscription.deleted``; open drafts are left to the caller."""
    sub.update({"status": "canceled", "canceled_at": sub.get("canceled_at") or now, "ended_at": now,
                "cancel_at": sub.get("cancel_at")})
    sub["cancellation_details"] = {**sub["cancellation_details"], "reason": sub["cancellation_details"].get("reason")
                                   or reason}
    ctx.save(sub)
    ctx.emit("customer.subscription.deleted", sub)


def anchor_from_config(start: int, config: dict[str, Any]) -> int:
    """The first ``billing_cycle_anchor`` after ``start`` matching ``billing_cycle_anchor_config``."""
    import calendar

    moment = datetime.fromtimestamp(start, UTC)
    year, month = moment.year, config.get("month") or moment.month
    for _ in range(26):
        day = min(config["day_of_month"], calendar.monthrange(year, month)[1])
        candidate = moment.replace(year=year, month=month, day=day, hour=config.get("hour", moment.hour),
                                   minute=config.get("minute", moment.minute),
                                   second=config.get("second", moment.second))
        if int(candidate.timestamp()) > start:
            return int(candidate.timestamp())
        if config.get("month"):
            year += 1
        else:
            year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return start


invoice_lifecycle.ON_PAID.append(on_invoice_paid)  # a paid invoice (however paid) activates its subscription
