"""Discounts: the ``di_`` objects a coupon or promotion code becomes when applied to a subscription, a customer
(``customer_discounts``), an invoice or an invoice item (``invoice_discounts``).

Stripe has no endpoint that reads a discount by itself: they are seen where they apply, by id in a subscription's
or invoice's ``discounts`` and in ``discount_amounts[].discount``, and in full with ``expand[]``. So this resource
stores them (``new_discount``) and renders them for the caller's version: the coupon under ``source.coupon`` (its
id) from 2025-09-30, the whole coupon under ``coupon`` before.

``announce(ctx, removed, added)`` emits the ``customer.discount.*`` events of a change of what a subscription's
discounts are: Stripe sends them for subscription discounts too (the discount names its ``subscription``).
One discount replaced by another is ``customer.discount.updated`` ("switched from one coupon to another");
otherwise each removed one is ``customer.discount.deleted`` (the discount with ``deleted: true``) and each new one
``customer.discount.created``. Callers announce before the subscription's own event of the same request.
"""

from __future__ import annotations

from typing import Any

from stripebench_emulator.context import RequestContext
from stripebench_emulator.registry import Resource
from stripebench_emulator.versions import PROMOTION_CODE_POLYMORPHIC

resource = Resource("discount", prefix="di", noun="discount",
                    expandable={"customer": "customer", "promotion_code": "promotion_code",
                                "source.coupon": "coupon", "subscription": "subscription"})


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


@resource.renderer
def render(obj: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """``source.coupon`` from 2025-09-30, the embedded ``coupon`` before."""
    applied = obj["_coupon"]
    if ctx.version_at_least(PROMOTION_CODE_POLYMORPHIC):
        obj["source"] = {"coupon": applied["id"], "type": "coupon"}
    else:
        coupon = ctx.find("coupon", applied["id"]) or applied
        obj["coupon"] = ctx.render(coupon)
    return dict(sorted(obj.items()))
