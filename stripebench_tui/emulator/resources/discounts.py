"""Discounts: the ``di_`` objects a coupon or promotion code becomes when applied to a subscription.

Stripe has no endpoint that reads a discount by itself: they are seen where they apply, by id in a subscription's
or invoice's ``discounts`` and in ``discount_amounts[].discount``, and in full with ``expand[]``. So this resource
only stores them (``new_discount``) and renders them for the caller's version: the coupon under
``source.coupon`` (its id) from 2025-09-30, the whole coupon under ``coupon`` before.
"""

from __future__ import annotations

from typing import Any

from stripebench_tui.emulator.context import RequestContext
from stripebench_tui.emulator.registry import Resource
from stripebench_tui.emulator.versions import PROMOTION_CODE_POLYMORPHIC

resource = Resource("discount", prefix="di", noun="discount",
                    expandable={"customer": "customer", "promotion_code": "promotion_code",
                                "source.coupon": "coupon", "subscription": "subscription"})


def new_discount(ctx: RequestContext, coupon: dict[str, Any], *, promotion_code: str | None, customer: str | None,
                 subscription: str | None, start: int, end: int | None) -> dict[str, Any]:
    """Save the discount ``coupon`` (a stored coupon) makes on a subscription; returns it."""
    obj = {"id": ctx.new_id("di"), "object": "discount", "checkout_session": None, "customer": customer,
           "customer_account": None, "end": end, "invoice": None, "invoice_item": None,
           "promotion_code": promotion_code, "start": start, "subscription": subscription,
           "subscription_item": None,
           # the coupon as applied: a coupon deleted later still shows on its discounts, as on Stripe
           "_coupon": coupon}
    return ctx.save(obj)


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
