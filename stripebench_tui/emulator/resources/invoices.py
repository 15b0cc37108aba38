"""Invoices (the paid first invoice of a subscription Checkout creates): retrieve, list, list lines.

Lines are stored inside the invoice (``_lines``) and rendered as ``line_item`` objects (the invoice kind; Checkout's
line items are ``item``). From 2025-03-31 an invoice has no ``payment_intent`` field (payments moved under
``payments``); before, it names the payment intent that paid it.
"""

from __future__ import annotations

from typing import Any

from stripebench_tui.emulator.context import LIST_PARAMS, RequestContext
from stripebench_tui.emulator.errors import invalid
from stripebench_tui.emulator.params import Enum, Str
from stripebench_tui.emulator.registry import Resource
from stripebench_tui.emulator.resources.invoice_payments import payments_page
from stripebench_tui.emulator.versions import SUBSCRIPTION_PERIOD_ON_ITEMS

resource = Resource("invoice", prefix="in", noun="invoice",
                    expandable={"customer": "customer", "subscription": "subscription",
                                "payment_intent": "payment_intent",
                                "parent.subscription_details.subscription": "subscription"},
                    includable={"payments"})
line_resource = Resource("line_item", prefix="il", noun="invoice line item")


def _lines_page(obj: dict[str, Any]) -> dict[str, Any]:
    return {"object": "list", "data": [dict(line) for line in obj["_lines"]], "has_more": False,
            "total_count": len(obj["_lines"]), "url": f"/v1/invoices/{obj['id']}/lines"}


@resource.renderer
def render(obj: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """Lines as a list; ``subscription``/``payment_intent`` at the top level only for pre-2025-03-31 versions."""
    obj["lines"] = _lines_page(obj)
    wanted = [path for path in ctx.expand_paths if path.split(".")[0] == "payments" or ".payments" in path]
    if wanted and not ctx.version_at_least(SUBSCRIPTION_PERIOD_ON_ITEMS):  # invoice payments came with 2025-03-31
        raise invalid(f"This property cannot be expanded ({wanted[0]}).", param="expand")
    if wanted:
        obj["payments"] = ctx.render(payments_page(obj))
    if not ctx.version_at_least(SUBSCRIPTION_PERIOD_ON_ITEMS):
        obj["subscription"] = obj["_subscription"]
        obj["payment_intent"] = obj["_payment_intent"]
        obj.pop("parent", None)
    return dict(sorted(obj.items()))


def create_paid_invoice(ctx: RequestContext, subscription: dict[str, Any] | None, lines: list[dict[str, Any]], *,
                        payment_intent: str | None, discount_amount: int = 0, customer_id: str | None = None,
                        currency: str | None = None, metadata: dict[str, str] | None = None,
                        billing_reason: str = "subscription_create") -> dict[str, Any]:
    """Create an invoice already paid (``lines``: ``[{price, quantity, amount, discount}]``).

    For a subscription's first invoice pass the subscription (``subscription.latest_invoice`` then points at it);
    for a one-time Checkout payment with ``invoice_creation`` pass None with ``customer_id`` and ``currency``.
    Emits ``invoice.created``, ``invoice.finalized``, ``invoice.paid`` and ``invoice.payment_succeeded`` in
    Stripe's order.
    """
    now = ctx.now()
    invoice_id = ctx.new_id("in")
    subtotal = sum(line["amount"] for line in lines)
    total = subtotal - discount_amount
    customer_id = subscription["customer"] if subscription else customer_id
    currency = subscription["currency"] if subscription else currency
    customer = ctx.find("customer", customer_id or "") or {}
    period = (subscription["_period_start"], subscription["_period_end"]) if subscription else (now, now)
    sub_id = subscription["id"] if subscription else None
    rendered_lines = []
    items = {item["price"]: item for item in subscription["_items"]} if subscription else {}
    for line in lines:
        item = items.get(line["price"])  # one-time prices are billed once, as plain invoice items
        price = ctx.find("price", line["price"]) or {}
        product = ctx.find("product", price.get("product", "")) or {}
        rendered_lines.append({
            "id": ctx.new_id("il"), "object": "line_item", "amount": line["amount"], "currency": price.get("currency"),
            "description": f"{line['quantity']} × {product.get('name', 'Item')} (at "
                           f"{(price.get('unit_amount') or 0) / 100:.2f} / {(price.get('recurring') or {}).get('interval', 'one time')})",
            "discount_amounts": [{"amount": line.get("discount", 0), "discount": None}] if line.get("discount") else [],
            "discountable": True, "discounts": [], "invoice": invoice_id, "livemode": False, "metadata": {},
            "parent": {"invoice_item_details": None, "subscription_item_details": {
                "invoice_item": None, "proration": False, "proration_details": {"credited_items": None},
                "subscription": sub_id, "subscription_item": item["id"]}, "type": "subscription_item_details"}
            if item else {"invoice_item_details": {"invoice_item": ctx.new_id("ii"), "proration": False,
                                                   "proration_details": {"credited_items": None},
                                                   "subscription": sub_id},
                          "subscription_item_details": None, "type": "invoice_item_details"},
            "period": {"end": period[1], "start": period[0]},
            "pretax_credit_amounts": [], "pricing": {"price_details": {"price": price.get("id"),
                                                                       "product": price.get("product")},
                                                     "type": "price_details",
                                                     "unit_amount_decimal": price.get("unit_amount_decimal")},
            "quantity": line["quantity"], "subtotal": line["amount"], "taxes": [],
        })
    obj: dict[str, Any] = {
        "id": invoice_id, "object": "invoice", "account_country": "US", "account_name": "Stripe emulator",
        "account_tax_ids": None, "amount_due": total, "amount_overpaid": 0, "amount_paid": 0,
        "amount_remaining": total, "amount_shipping": 0, "application": None, "attempt_count": 0, "attempted": False,
        "auto_advance": False, "automatic_tax": {"disabled_reason": None, "enabled": False, "liability": None,
                                                 "provider": None, "status": None},
        "automatically_finalizes_at": None, "billing_reason": billing_reason,
        "collection_method": "charge_automatically", "created": now, "currency": currency,
        "custom_fields": None, "customer": customer_id, "customer_account": None,
        "customer_address": customer.get("address"), "customer_email": customer.get("email"),
        "customer_name": customer.get("name"), "customer_phone": customer.get("phone"),
        "customer_shipping": customer.get("shipping"), "customer_tax_exempt": "none", "customer_tax_ids": [],
        "default_payment_method": None, "default_source": None, "default_tax_rates": [], "description": None,
        "discounts": [], "due_date": None, "effective_at": None, "ending_balance": None, "footer": None,
        "from_invoice": None, "hosted_invoice_url": f"{ctx.base_url}/i/{invoice_id}", "invoice_pdf": None,
        "issuer": {"type": "self"}, "last_finalization_error": None, "latest_revision": None, "livemode": False,
        "metadata": dict(metadata or {}), "next_payment_attempt": None, "number": None, "on_behalf_of": None,
        "parent": {"quote_details": None, "subscription_details": {"metadata": subscription["metadata"],
                                                                   "subscription": sub_id},
                   "type": "subscription_details"} if subscription else None,
        "payment_settings": {"default_mandate": None, "payment_method_options": None, "payment_method_types": None},
        "period_end": now, "period_start": now, "post_payment_credit_notes_amount": 0,
        "pre_payment_credit_notes_amount": 0, "receipt_number": None, "rendering": None, "shipping_cost": None,
        "shipping_details": None, "starting_balance": 0, "statement_descriptor": None, "status": "draft",
        "status_transitions": {"finalized_at": None, "marked_uncollectible_at": None, "paid_at": None,
                               "voided_at": None},
        "subtotal": subtotal, "subtotal_excluding_tax": subtotal, "test_clock": None, "total": total,
        "total_discount_amounts": [{"amount": discount_amount, "discount": None}] if discount_amount else [],
        "total_excluding_tax": total, "total_pretax_credit_amounts": [], "total_taxes": [],
        "webhooks_delivered_at": now,
        "_lines": rendered_lines, "_subscription": sub_id, "_payment_intent": payment_intent,
    }
    ctx.save(obj)
    ctx.emit("invoice.created", obj)
    count = len([i for i in ctx.store.scan("invoice") if i.get("number")])
    obj.update({"status": "open", "number": f"EMU-{count + 1:04d}", "effective_at": now,
                "status_transitions": {**obj["status_transitions"], "finalized_at": now}})
    ctx.save(obj)
    ctx.emit("invoice.finalized", obj)
    obj.update({"status": "paid", "amount_paid": total, "amount_remaining": 0, "attempt_count": 1, "attempted": True,
                "status_transitions": {**obj["status_transitions"], "paid_at": now}})
    ctx.save(obj)
    ctx.emit("invoice.paid", obj)
    ctx.emit("invoice.payment_succeeded", obj)
    if subscription is None:
        return obj
    before = dict(subscription)
    subscription["latest_invoice"] = invoice_id
    ctx.save(subscription)
    ctx.emit("customer.subscription.updated", subscription, previous=before)
    return obj


@resource.route("GET", "/v1/invoices/{id}")
def retrieve(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Retrieve an invoice."""
    return ctx.get("invoice", id, param="invoice")


@resource.route("GET", "/v1/invoices/{id}/lines", params=LIST_PARAMS)
def list_lines(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """An invoice's line items."""
    invoice = ctx.get("invoice", id, param="invoice")
    return ctx.list_page("line_item", {k: v for k, v in params.items() if k != "created"},
                         f"/v1/invoices/{id}/lines", items=[dict(line) for line in invoice["_lines"]])


@resource.route("GET", "/v1/invoices", params={
    **LIST_PARAMS, "customer": Str(), "subscription": Str(), "collection_method": Enum(
        "charge_automatically", "send_invoice"), "status": Enum("draft", "open", "paid", "uncollectible", "void"),
    "due_date": Str()})
def list_invoices(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """List invoices with ``customer``, ``subscription``, ``status`` filters."""
    def keep(inv: dict[str, Any]) -> bool:
        return all((
            "customer" not in params or inv["customer"] == params["customer"],
            "subscription" not in params or inv["_subscription"] == params["subscription"],
            "status" not in params or inv["status"] == params["status"],
            "collection_method" not in params or inv["collection_method"] == params["collection_method"],
        ))

    return ctx.list_page("invoice", params, "/v1/invoices", where=keep)
