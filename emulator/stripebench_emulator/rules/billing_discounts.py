"""Discounts: the ``di_`` objects a coupon or promotion code becomes when applied, which one a subscription's invoice
takes off, and discounts running out.

``new_discount`` stores one (on a subscription, a customer, an invoice or an invoice item); ``announce(ctx, removed,
added)`` emits the ``customer.discount.*`` events of a change of what a subscription's or customer's discounts are:
Stripe sends them for subscription discounts too (the discount names its ``subscription``). One discount replaced by
another is ``customer.discount.updated`` ("switched from one coupon to another"); otherwise each removed one is
``customer.discount.deleted`` (the discount with ``deleted: true``) and each new one ``customer.discount.created``.
Callers announce before the subscription's own event of the same request.

A subscription's own discounts (``sub["_discounts"]``, see ``billing_changes.discounts_from``) come first; when none
of them is in force, the customer's discount (``customer["_discount"]``, see ``apply_to_customer``)
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

from stripebench_emulator.model.context import RequestContext
from stripebench_emulator.model.errors import invalid, unknown_param
from stripebench_emulator.model.versions import SINGULAR_COUPON_REMOVED
from stripebench_emulator.rules import billing_time, redemption

# A customer's discount: ``coupon`` / ``promotion_code`` on ``POST /v1/customers`` (and its update) before 2025-03-31
# (Basil removed them: from that version on they are unknown parameters). A coupon (or a promotion code's coupon)
# becomes a ``di_`` discount with ``customer`` set and no ``subscription``, kept on the customer as ``_discount`` (an
# entry as a subscription's ``_discounts`` hold); ``""`` removes it. Billing takes it off the customer's subscription
# invoices when the subscription has no discount of its own.
CUSTOMER_PARAMS = ("coupon", "promotion_code")


def redeem(ctx: RequestContext, coupon: dict[str, Any], promo_id: str | None, *, customer: str | None,
           subscription: str | None, now: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Apply ``coupon`` (checked by the caller) from ``now``: the stored ``di_`` discount (what ``expand[]`` shows)
    and the entry a subscription's ``_discounts`` or a customer's ``_discount`` keeps of it (a ``repeating``
    coupon ends after its months); the redemption is counted."""
    months = coupon.get("duration_in_months") or 0
    end = billing_time.period_end(now, "month", months) if coupon["duration"] == "repeating" else None
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
    ended = [entry for entry in sub.get("_discounts") or [] if not in_force(entry, now)]
    if ended:
        gone = {entry["id"] for entry in ended}
        sub["_discounts"] = [entry for entry in sub["_discounts"] if entry["id"] not in gone]
        sub["discounts"] = [di for di in sub.get("discounts") or [] if di not in gone]
        announce(ctx, [ctx.get("discount", entry["id"]) for entry in ended], [])
    expire_customer(ctx, sub.get("customer"), now)


def expire_customer(ctx: RequestContext, customer_id: str | None, now: int) -> None:
    """Remove the customer's discount if it has run out by ``now`` (``customer.discount.deleted``)."""
    customer = ctx.find("customer", customer_id or "") if customer_id else None
    entry = (customer or {}).get("_discount")
    if customer is not None and entry is not None and not in_force(entry, now):
        ctx.save({**customer, "_discount": None})
        announce(ctx, [ctx.get("discount", entry["id"])], [])


def new_discount(ctx: RequestContext, coupon: dict[str, Any], *, promotion_code: str | None, customer: str | None,
                 subscription: str | None, start: int, end: int | None, invoice: str | None = None,
                 invoice_item: str | None = None) -> dict[str, Any]:
    """Save the discount ``coupon`` (a stored coupon) makes on a subscription, customer, invoice or invoice item
    (``invoice_discounts``); returns it."""
    obj = {"id": ctx.new_id("di"), "object": "discount", "checkout_session": None, "customer": customer,
           "customer_account": None, "end": end, "invoice": invoice, "invoice_item": invoice_item,
           "promotion_code": promotion_code, "start": start, "subscription": subscription,
           "subscription_item": None,
           # the coupon as applied: a coupon deleted later still shows on its discounts, as on Stripe
           "_coupon": dict(coupon)}
    return ctx.save(obj)


def announce(ctx: RequestContext, removed: list[dict[str, Any]], added: list[dict[str, Any]]) -> None:
    """Emit the ``customer.discount.*`` events for discounts (stored ``di_`` objects) taken off and put on."""
    if len(removed) == 1 and len(added) == 1:
        ctx.emit("customer.discount.updated", added[0], previous=removed[0])
        return
    for discount in removed:
        ctx.emit("customer.discount.deleted", deleted(discount))
    for discount in added:
        ctx.emit("customer.discount.created", discount)


def deleted(discount: dict[str, Any]) -> dict[str, Any]:
    """A discount as Stripe shows it once removed (the stored one stays: past invoices still point at it)."""
    return {**discount, "deleted": True}


def apply_to_customer(ctx: RequestContext, customer: dict[str, Any], params: dict[str, Any], now: int
          ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Apply ``coupon`` / ``promotion_code`` to ``customer`` (not saved); the discounts (stored ``di_`` objects)
    taken off and put on, for the caller to ``announce`` once the customer is saved."""
    sent = [name for name in CUSTOMER_PARAMS if name in params]
    if not sent:
        return [], []
    if ctx.version_at_least(SINGULAR_COUPON_REMOVED):
        raise unknown_param(sent[0])
    if len(sent) > 1:
        raise invalid("You may only specify one of these parameters: coupon, promotion_code.", param=sent[1])
    name = sent[0]
    old = customer.get("_discount")
    removed = [ctx.get("discount", old["id"])] if old else []
    if not params[name]:
        customer["_discount"] = None
        return removed, []
    # checked and counted as everywhere else (``redemption``); no amount is known until an invoice takes it
    coupon, promo, _ = redemption.check(ctx, {name: params[name]}, "", customer_id=customer["id"],
                                        now=now)  # the customer's test clock's time when it has one
    customer["_discount"], discount = redeem(ctx, coupon, (promo or {}).get("id"), customer=customer["id"],
                                             subscription=None, now=now)
    return removed, [discount]
