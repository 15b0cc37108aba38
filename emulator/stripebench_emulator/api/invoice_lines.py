"""Invoice lines: one canonical stored form (2025-03-31 "basil" shape) and its rendering for older API versions.

A line is stored inside its invoice (``_lines``) and rendered as a ``line_item``. From 2025-03-31 a line names its
price under ``pricing.price_details`` and its origin under ``parent``; before, it carries the whole ``price``
object, ``type`` (``subscription`` / ``invoiceitem``), ``subscription``, ``subscription_item``, ``invoice_item``
and ``proration`` at the top level.
"""

from __future__ import annotations

from typing import Any

from stripebench_emulator.api.plans import plan_of
from stripebench_emulator.model.context import RequestContext
from stripebench_emulator.model.versions import SUBSCRIPTION_PERIOD_ON_ITEMS
from stripebench_emulator.rules import billing_tax


def render_line(line: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """A stored line as this request's API version shows it."""
    out = {k: v for k, v in line.items() if not k.startswith("_")}  # its tax rates (``_tax_rates``) among others
    if ctx.version_at_least(SUBSCRIPTION_PERIOD_ON_ITEMS):
        return out
    parent = out.pop("parent", None) or {}
    pricing = out.pop("pricing", None) or {}
    sub_details = parent.get("subscription_item_details")
    details = sub_details or parent.get("invoice_item_details") or {}
    price_id = (pricing.get("price_details") or {}).get("price")
    price = ctx.find("price", price_id) if price_id else None
    for key in ("pretax_credit_amounts", "taxes", "quantity_decimal"):
        out.pop(key, None)
    out.update({
        "type": "subscription" if sub_details else "invoiceitem",
        "invoice_item": None if sub_details else details.get("invoice_item"),
        "subscription": details.get("subscription"),
        "subscription_item": (sub_details or {}).get("subscription_item"),
        "proration": details.get("proration", False), "proration_details": {"credited_items": None},
        "price": ctx.render(price) if price else None,
        # "the plan of the subscription, if the line item is a subscription or a proration"
        "plan": plan_of(ctx, price) if sub_details or details.get("proration") else None,
        **billing_tax.legacy_line_fields(line, ctx),  # tax_amounts, tax_rates, amount/unit_amount_excluding_tax
    })
    return out


def lines_page(invoice: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """``invoice.lines`` as embedded in the invoice."""
    lines = invoice["_lines"]
    return {"object": "list", "data": [render_line(line, ctx) for line in lines], "has_more": False,
            "total_count": len(lines), "url": f"/v1/invoices/{invoice['id']}/lines"}
