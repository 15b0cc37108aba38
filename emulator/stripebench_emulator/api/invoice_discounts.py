"""Discounts on one-off invoices and on invoice items: the ``discounts`` param of ``POST /v1/invoices`` (create and
draft update) and of ``POST /v1/invoiceitems`` (create and update).

``discounts`` is an array of ``{coupon}``, ``{promotion_code}`` or ``{discount}`` (a ``di_`` discount the invoice —
or item — already has, or for an invoice its customer's discount); ``""`` sets none. Each coupon or promotion code
becomes a ``di_`` discount (``billing_discounts.new_discount``) naming the invoice (``invoice``) or the item
(``invoice_item``); it has no ``end``: a coupon's ``once``/``repeating`` duration means nothing past the invoice it
was applied to. The invoice's ``discounts`` lists the invoice-level ones, an item's (and its line's) its own.

Created without ``discounts``, an invoice takes its customer's discount if one is in force (the same ``di_``
object, not a copy), as Stripe documents for the param; a ``once`` one is then spent (``billing_discounts``), as
it is by the first subscription invoice that takes it.

What each discount takes off which line is ``discount_amounts``'s (rules stored on the invoice, ``_discount_rules``,
and on item lines); ``invoicing.recompute`` applies them whenever a draft changes.
"""

from __future__ import annotations

from typing import Any

from stripebench_emulator.model.context import RequestContext
from stripebench_emulator.model.errors import invalid
from stripebench_emulator.rules import billing_discounts, discount_amounts, redemption
from stripebench_emulator.rules.billing_changes import DISCOUNTS

__all__ = ["DISCOUNTS", "for_new_invoice", "set_on_invoice", "set_on_item", "item_rules"]


def _resolve(ctx: RequestContext, specs: list[dict[str, Any]] | None, param: str, *, kept: set[str],
             customer_id: str | None, invoice_id: str | None, item_id: str | None, amount: int | None = None,
             currency: str | None = None) -> list[dict[str, Any]]:
    """The stored discounts ``specs`` name, new ones saved for coupons and promotion codes (``kept``: the ``di_``
    ids ``{discount}`` may name), each checked and counted by ``redemption`` (``amount`` in ``currency``: what
    they discount, for a promotion code's minimum; an item's amount, none for an invoice still being built)."""
    found: list[dict[str, Any]] = []
    now = ctx.now()
    for i, spec in enumerate(specs or []):
        if spec.get("discount"):
            if spec["discount"] not in kept:
                raise invalid(f"No such discount: '{spec['discount']}'", param=f"{param}[{i}][discount]",
                              code="resource_missing")
            found.append(ctx.get("discount", spec["discount"]))
            continue
        coupon, promo, _ = redemption.check(ctx, spec, f"{param}[{i}]", customer_id=customer_id, amount=amount,
                                            currency=currency)
        promo_id = (promo or {}).get("id")
        found.append(billing_discounts.new_discount(ctx, coupon, promotion_code=promo_id, customer=customer_id,
                                            subscription=None, start=now, end=None, invoice=invoice_id,
                                            invoice_item=item_id))
        redemption.record(ctx, coupon["id"], promo_id)
    return found


def _put(invoice: dict[str, Any], found: list[dict[str, Any]]) -> None:
    invoice["discounts"] = [d["id"] for d in found]
    invoice["_discount_rules"] = [discount_amounts.rule(d, invoice["currency"]) for d in found]


def for_new_invoice(ctx: RequestContext, invoice: dict[str, Any], params: dict[str, Any]) -> None:
    """Give a new draft (not saved) the ``discounts`` passed, else its customer's discount in force."""
    if "discounts" in params:
        _put(invoice, _resolve(ctx, params["discounts"], "discounts", kept=set(), customer_id=invoice["customer"],
                               invoice_id=invoice["id"], item_id=None))
        return
    now = ctx.now()
    billing_discounts.expire_customer(ctx, invoice["customer"], now)  # a spent one goes (customer.discount.deleted)
    entry = billing_discounts.customer_entry(ctx, invoice["customer"])
    stored = ctx.find("discount", entry["id"]) if entry is not None and billing_discounts.in_force(entry, now) \
        else None
    _put(invoice, [stored] if stored is not None else [])
    if stored is not None:
        billing_discounts.customer_used(ctx, invoice["customer"], stored["id"])


def set_on_invoice(ctx: RequestContext, invoice: dict[str, Any], specs: list[dict[str, Any]] | None) -> None:
    """Replace a draft's discounts (not saved); ``{discount}`` may keep one it has or name its customer's."""
    entry = billing_discounts.customer_entry(ctx, invoice["customer"])
    kept = set(invoice.get("discounts") or []) | ({entry["id"]} if entry else set())
    _put(invoice, _resolve(ctx, specs, "discounts", kept=kept, customer_id=invoice["customer"],
                           invoice_id=invoice["id"], item_id=None))


def set_on_item(ctx: RequestContext, item: dict[str, Any], specs: list[dict[str, Any]] | None) -> None:
    """Replace an invoice item's own discounts (not saved); ``{discount}`` may keep one it has."""
    found = _resolve(ctx, specs, "discounts", kept=set(item.get("discounts") or []), customer_id=item["customer"],
                     invoice_id=None, item_id=item["id"], amount=item.get("amount"), currency=item.get("currency"))
    item["discounts"] = [d["id"] for d in found]


def item_rules(ctx: RequestContext, item: dict[str, Any]) -> list[dict[str, Any]]:
    """The discount rules of an invoice item's own discounts, for its line."""
    return [discount_amounts.rule(ctx.get("discount", di), item["currency"]) for di in item.get("discounts") or []]
