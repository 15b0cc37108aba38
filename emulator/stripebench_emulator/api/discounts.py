"""Discounts: the ``di_`` objects a coupon or promotion code becomes when applied to a subscription, a customer
(``customers``), an invoice or an invoice item (``invoice_discounts``).

Stripe has no endpoint that reads a discount by itself: they are seen where they apply, by id in a subscription's
or invoice's ``discounts`` and in ``discount_amounts[].discount``, and in full with ``expand[]``. So this resource
renders them (made by ``billing_discounts.new_discount``) for the caller's version: the coupon under
``source.coupon`` (its id) from 2025-09-30, the whole coupon under ``coupon`` before.
"""

from __future__ import annotations

from typing import Any

from stripebench_emulator.model.context import RequestContext
from stripebench_emulator.model.registry import Resource
from stripebench_emulator.model.versions import PROMOTION_CODE_POLYMORPHIC

resource = Resource("discount", prefix="di", noun="discount",
                    expandable={"customer": "customer", "promotion_code": "promotion_code",
                                "source.coupon": "coupon", "subscription": "subscription"})


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
