"""Invoice objects: a draft invoice made, its lines, its totals recomputed (discounts, then taxes), and the customer's
tax IDs it carries. Stored lines keep one canonical form (2025-03-31 "basil" shape; ``api/invoice_lines.py``
renders them for older versions)."""

from __future__ import annotations

from typing import Any

from stripebench_emulator.model.context import RequestContext
from stripebench_emulator.model.errors import StripeError
from stripebench_emulator.rules import billing_tax, discount_amounts


def recompute(invoice: dict[str, Any]) -> None:
    """Discount amounts (``discount_amounts``: for invoices with discount rules), then taxes and totals from the
    lines, discounts and tax rates, ``amount_remaining`` from what has been paid."""
    discount_amounts.allocate(invoice)
    billing_tax.apply(invoice)


def new_invoice(ctx: RequestContext, customer_id: str | None, currency: str | None, *,
                subscription: dict[str, Any] | None = None, billing_reason: str = "manual",
                metadata: dict[str, str] | None = None, collection_method: str = "charge_automatically",
                auto_advance: bool = False, description: str | None = None, due_date: int | None = None,
                default_payment_method: str | None = None, footer: str | None = None,
                statement_descriptor: str | None = None, emit: bool = True) -> dict[str, Any]:
    """Save a draft invoice without lines and emit ``invoice.created`` (``emit=False``: the caller does, once
    the lines are in)."""
    now = ctx.now()
    invoice_id = ctx.new_id("in")
    customer = ctx.find("customer", customer_id or "") or {}
    sub_id = subscription["id"] if subscription else None
    obj: dict[str, Any] = {
        "id": invoice_id, "object": "invoice", "account_country": "US", "account_name": "Stripe emulator",
        "account_tax_ids": None, "amount_due": 0, "amount_overpaid": 0, "amount_paid": 0,
        "amount_remaining": 0, "amount_shipping": 0, "application": None, "attempt_count": 0, "attempted": False,
        "auto_advance": auto_advance, "automatic_tax": {"disabled_reason": None, "enabled": False, "liability": None,
                                                        "provider": None, "status": None},
        "automatically_finalizes_at": None, "billing_reason": billing_reason,
        "collection_method": collection_method, "created": now, "currency": currency,
        "custom_fields": None, "customer": customer_id, "customer_account": None,
        "customer_address": customer.get("address"), "customer_email": customer.get("email"),
        "customer_name": customer.get("name"), "customer_phone": customer.get("phone"),
        "customer_shipping": customer.get("shipping"), "customer_tax_exempt": customer.get("tax_exempt", "none"),
        "customer_tax_ids": invoice_entries(ctx, customer["id"]),
        "default_payment_method": default_payment_method, "default_source": None,
        "default_tax_rates": [], "description": description, "discounts": [], "due_date": due_date,
        "effective_at": None, "ending_balance": None, "footer": footer, "from_invoice": None,
        "hosted_invoice_url": None, "invoice_pdf": None, "issuer": {"type": "self"},
        "last_finalization_error": None, "latest_revision": None, "livemode": False,
        "metadata": dict(metadata or {}), "next_payment_attempt": None, "number": None, "on_behalf_of": None,
        "parent": {"quote_details": None, "subscription_details": {"metadata": subscription["metadata"],
                                                                   "subscription": sub_id},
                   "type": "subscription_details"} if subscription else None,
        "payment_settings": {"default_mandate": None, "payment_method_options": None, "payment_method_types": None},
        "period_end": now, "period_start": now, "post_payment_credit_notes_amount": 0,
        "pre_payment_credit_notes_amount": 0, "receipt_number": None, "rendering": None, "shipping_cost": None,
        "shipping_details": None, "starting_balance": 0, "statement_descriptor": statement_descriptor,
        "status": "draft",
        "status_transitions": {"finalized_at": None, "marked_uncollectible_at": None, "paid_at": None,
                               "voided_at": None},
        "subtotal": 0, "subtotal_excluding_tax": 0, "test_clock": customer.get("test_clock"), "total": 0,
        "total_discount_amounts": [], "total_excluding_tax": 0, "total_pretax_credit_amounts": [], "total_taxes": [],
        "webhooks_delivered_at": None,
        "_lines": [], "_payments": [], "_subscription": sub_id, "_payment_intent": None,
    }
    ctx.save(obj)
    if emit:
        ctx.emit("invoice.created", obj)
    return obj


def editable_draft(invoice: dict[str, Any]) -> None:
    """Raise Stripe's error unless the invoice is still a draft (lines and amounts only change then)."""
    if invoice["status"] != "draft":
        raise StripeError("The specified invoice can no longer be edited. Instead, consider creating one or more "
                          "invoice items that will be applied to the next invoice.", code="invoice_not_editable")


def describe(ctx: RequestContext, price: dict[str, Any] | None, quantity: int, fallback: str | None) -> str | None:
    """Stripe's generated description, ``2 × Widget (at $5.00 / month)``, or the caller's one."""
    if fallback is not None or price is None:
        return fallback
    product = ctx.find("product", price.get("product", "")) or {}
    interval = (price.get("recurring") or {}).get("interval", "one time")
    return f"{quantity} × {product.get('name', 'Item')} (at {(price.get('unit_amount') or 0) / 100:.2f} / {interval})"


def new_line(ctx: RequestContext, invoice_id: str, *, amount: int, currency: str | None, quantity: int,
             price: dict[str, Any] | None, period: tuple[int, int], description: str | None = None,
             subscription: str | None = None, subscription_item: str | None = None,
             invoice_item: str | None = None, discount: int = 0, discount_id: str | None = None,
             metadata: dict[str, str] | None = None, proration: bool = False, discountable: bool = True,
             preview: bool = False) -> dict[str, Any]:
    """A line in the canonical shape (``invoice_item`` lines come from invoice items, the others from subscriptions).

    ``preview``: a line of an invoice that is only shown (``create_preview``, ``invoice.upcoming``): a temporary id,
    and no invoice item is made up for it."""
    details = {"invoice_item": invoice_item, "proration": proration, "proration_details": {"credited_items": None},
               "subscription": subscription}
    if subscription_item:
        parent = {"invoice_item_details": None, "type": "subscription_item_details",
                  "subscription_item_details": {**details, "subscription_item": subscription_item}}
    else:
        if invoice_item is None and not preview:
            details["invoice_item"] = ctx.new_id("ii")
        parent = {"invoice_item_details": details, "subscription_item_details": None, "type": "invoice_item_details"}
    return {
        "id": "il_tmp_" + ctx.emulator.ids.token("preview_line", 14) if preview else ctx.new_id("il"),
        "object": "line_item", "amount": amount, "currency": currency,
        "description": describe(ctx, price, quantity, description),
        "discount_amounts": [{"amount": discount, "discount": discount_id}] if discount else [],
        "discountable": discountable, "discounts": [], "invoice": invoice_id, "livemode": False,
        "metadata": dict(metadata or {}),
        "parent": parent, "period": {"end": period[1], "start": period[0]}, "pretax_credit_amounts": [],
        "pricing": {"price_details": {"price": price["id"], "product": price.get("product")}, "type": "price_details",
                    "unit_amount_decimal": price.get("unit_amount_decimal")} if price else None,
        "quantity": quantity, "quantity_decimal": str(quantity), "subscription": subscription, "subtotal": amount,
        "taxes": [],
    }


def invoice_entries(ctx: RequestContext, customer: str) -> list[dict[str, Any]]:
    """The customer's tax IDs as an invoice shows them (``customer_tax_ids``: type and value, oldest first): an
    invoice carries them from its creation and takes them again when finalised, then keeps them."""
    owned = [t for t in ctx.store.scan("tax_id") if t["customer"] == customer and not t.get("deleted")]
    return [{"type": t["type"], "value": t["value"]} for t in reversed(owned)]
