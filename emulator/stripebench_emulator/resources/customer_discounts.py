"""A customer's discount: ``coupon`` / ``promotion_code`` on ``POST /v1/customers`` (and its update) before
2025-03-31, the ``discount`` the customer object shows, and ``DELETE /v1/customers/{id}/discount``.

Basil (2025-03-31) removed the singular ``coupon`` and ``promotion_code`` params from customers: from that version
on they are unknown parameters. Before it, a coupon (or a promotion code's coupon) becomes a ``di_`` discount
(``discounts.new_discount``, with ``customer`` set and no ``subscription``) kept on the customer as
``_discount`` (an entry as a subscription's ``_discounts`` hold, see ``billing_discounts``); ``""`` removes it.
Billing takes it off the customer's subscription invoices when the subscription has no discount of its own.
Changes are announced with ``customer.discount.*`` (``discounts.announce``) before the customer's own event.
"""

from __future__ import annotations

from typing import Any

from stripebench_emulator import billing_discounts, redemption
from stripebench_emulator.context import RequestContext
from stripebench_emulator.errors import StripeError, invalid, unknown_param
from stripebench_emulator.resources import discounts
from stripebench_emulator.resources.customers import resource
from stripebench_emulator.versions import SINGULAR_COUPON_REMOVED

NAMES = ("coupon", "promotion_code")  # customers.DISCOUNT_PARAMS


def render_into(obj: dict[str, Any], ctx: RequestContext) -> None:
    """Set the rendered customer ``obj``'s ``discount`` to its discount object (for the caller's version)."""
    entry = obj.get("_discount")
    discount = ctx.find("discount", entry["id"]) if entry else None
    obj["discount"] = ctx.render(discount) if discount is not None else None


def apply(ctx: RequestContext, customer: dict[str, Any], params: dict[str, Any], now: int
          ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Apply ``coupon`` / ``promotion_code`` to ``customer`` (not saved); the discounts (stored ``di_`` objects)
    taken off and put on, for the caller to ``announce`` once the customer is saved."""
    sent = [name for name in NAMES if name in params]
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
    customer["_discount"], discount = billing_discounts.redeem(ctx, coupon, (promo or {}).get("id"),
                                                              customer=customer["id"], subscription=None, now=now)
    return removed, [discount]


@resource.route("DELETE", "/v1/customers/{id}/discount")
def delete_discount(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Remove the customer's discount (``customer.discount.deleted``, then ``customer.updated``); answers the
    deleted discount."""
    customer = ctx.get("customer", id)
    entry = customer.get("_discount")
    if not entry:
        raise StripeError(f"No active discount for customer: {id}", status=404, code="resource_missing")
    before = ctx.get("customer", id)
    removed = ctx.get("discount", entry["id"])
    customer["_discount"] = None
    ctx.save(customer)
    discounts.announce(ctx, [removed], [])
    ctx.emit("customer.updated", customer, previous=before)
    return discounts.deleted(removed)
