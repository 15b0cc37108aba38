"""Which discount a subscription's invoice takes off, and discounts running out.

A subscription's own discounts (``sub["_discounts"]``, see ``billing_changes.discounts_from``) come first; when none
of them is in force, the customer's discount (``customer["_discount"]``, see ``resources/customer_discounts``)
applies, as on Stripe, where a subscription's discount takes precedence over its customer's. Both are entries
``{id, coupon, promotion_code, start, duration, end}`` naming a stored ``di_`` discount; ``once_used`` marks a
``once`` discount that has been taken off an invoice.

A discount runs out when its ``end`` (a ``repeating`` coupon's months) has passed or, for ``once``, after the first
invoice it was taken off (a one-off invoice that inherits the customer's discount spends it too:
``customer_used``). ``expire`` removes such discounts from the subscription and its customer when Billing
next makes an invoice for them (a renewal on a test clock, an update billed at once), announcing each with
``customer.discount.deleted`` before that invoice is made.
"""

from __future__ import annotations

from typing import Any

from stripebench_emulator.context import RequestContext


def redeem(ctx: RequestContext, coupon: dict[str, Any], promo_id: str | None, *, customer: str | None,
           subscription: str | None, now: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Apply ``coupon`` (checked by the caller) from ``now``: the stored ``di_`` discount (what ``expand[]`` shows)
    and the entry a subscription's ``_discounts`` or a customer's ``_discount`` keeps of it (a ``repeating``
    coupon ends after its months); the redemption is counted."""
    from stripebench_emulator import billing_cycle as cycle
    from stripebench_emulator import redemption
    from stripebench_emulator.resources.discounts import new_discount

    months = coupon.get("duration_in_months") or 0
    end = cycle.period_end(now, "month", months) if coupon["duration"] == "repeating" else None
    discount = new_discount(ctx, coupon, promotion_code=promo_id, customer=customer, subscription=subscription,
                            start=now, end=end)
    entry = {"id": discount["id"], "coupon": coupon["id"], "promotion_code": promo_id, "start": now,
             "duration": coupon["duration"], "end": end}
    redemption.record(ctx, coupon["id"], promo_id)
    return entry, discount


def in_force(entry: dict[str, Any], now: int) -> bool:
    """Whether the discount ``entry`` still applies at ``now``."""
    return not entry.get("once_used") and (entry.get("end") is None or now < entry["end"])


def customer_entry(ctx: RequestContext, customer_id: str | None) -> dict[str, Any] | None:
    """The customer's discount entry, if it has one."""
    customer = ctx.find("customer", customer_id or "") if customer_id else None
    return (customer or {}).get("_discount")


def applicable(ctx: RequestContext, sub: dict[str, Any], now: int) -> dict[str, Any] | None:
    """The discount entry an invoice of ``sub`` made at ``now`` takes off: its own first, else its customer's."""
    for entry in sub.get("_discounts") or []:
        if in_force(entry, now):
            return entry
    entry = customer_entry(ctx, sub.get("customer"))
    return entry if entry is not None and in_force(entry, now) else None


def spent(sub: dict[str, Any], discount_id: str | None) -> None:
    """The subscription's own discount ``discount_id`` was taken off an invoice (a ``once`` one is then spent)."""
    sub["_discounts"] = [{**entry, "once_used": True} if entry["id"] == discount_id and entry.get("duration") == "once"
                         else entry for entry in sub.get("_discounts") or []]


def used(ctx: RequestContext, sub: dict[str, Any], discount_id: str | None) -> None:
    """``discount_id`` was taken off an invoice of ``sub``: a ``once`` one is then spent (on the subscription, which
    the caller saves, or on the customer, saved here)."""
    if not discount_id:
        return
    spent(sub, discount_id)
    customer_used(ctx, sub.get("customer"), discount_id)


def customer_used(ctx: RequestContext, customer_id: str | None, discount_id: str | None) -> None:
    """``discount_id`` was taken off an invoice of the customer (a subscription's or a one-off invoice that took
    the customer's discount): if it is the customer's ``once`` discount, it is spent (saved here)."""
    customer = ctx.find("customer", customer_id or "") if customer_id and discount_id else None
    entry = (customer or {}).get("_discount")
    if customer is not None and entry is not None and entry["id"] == discount_id and entry.get("duration") == "once":
        ctx.save({**customer, "_discount": {**entry, "once_used": True}})


def expire(ctx: RequestContext, sub: dict[str, Any], now: int) -> None:
    """Remove the discounts of ``sub`` (not saved: the caller saves it) and of its customer that have run out by
    ``now``, with ``customer.discount.deleted`` for each."""
    from stripebench_emulator.resources import discounts

    ended = [entry for entry in sub.get("_discounts") or [] if not in_force(entry, now)]
    if ended:
        gone = {entry["id"] for entry in ended}
        sub["_discounts"] = [entry for entry in sub["_discounts"] if entry["id"] not in gone]
        sub["discounts"] = [di for di in sub.get("discounts") or [] if di not in gone]
        discounts.announce(ctx, [ctx.get("discount", entry["id"]) for entry in ended], [])
    expire_customer(ctx, sub.get("customer"), now)


def expire_customer(ctx: RequestContext, customer_id: str | None, now: int) -> None:
    """Remove the customer's discount if it has run out by ``now`` (``customer.discount.deleted``)."""
    from stripebench_emulator.resources import discounts

    customer = ctx.find("customer", customer_id or "") if customer_id else None
    entry = (customer or {}).get("_discount")
    if customer is not None and entry is not None and not in_force(entry, now):
        ctx.save({**customer, "_discount": None})
        discounts.announce(ctx, [ctx.get("discount", entry["id"])], [])
