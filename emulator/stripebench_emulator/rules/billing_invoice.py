"""The invoices Billing makes for subscriptions (first, cycle, update, proration), at a given time.

Stored in the same form as ``api/invoices.py``'s (``_lines``, ``_subscription``, ``_payment_intent``,
``_payments``), so the invoice resource renders and lists them and payments can be attached to them; this module only
builds and finalises them. Paying goes through ``invoice_lifecycle.record_payment`` like every other invoice's, so
amounts, status, invoice payments and events are produced one way. A line is given as
``{amount, price, quantity, period: (start, end), item (subscription item id or None), proration, description}``
and optionally ``tax_rates`` (the line's own tax rates, see ``billing_tax``).
"""

from __future__ import annotations

from typing import Any

from stripebench_emulator.model.context import RequestContext
from stripebench_emulator.model.errors import StripeError
from stripebench_emulator.rules import billing_tax, discount_amounts, intents, invoice_lifecycle
from stripebench_emulator.rules.invoicing import invoice_entries, new_line

DAY = 86400
FINALIZE_DELAY = 3600  # Stripe finalises a renewal's draft invoice about an hour after creating it


def _line(ctx: RequestContext, invoice_id: str, sub_id: str | None, line: dict[str, Any], save: bool
          ) -> dict[str, Any]:
    price = ctx.find("price", line["price"])
    item = line.get("item")
    # Prorations are pending invoice items pulled into the invoice; plain cycle lines come from the item itself.
    ii = ctx.new_id("ii") if save and (line["proration"] or not item) else None
    return new_line(ctx, invoice_id, amount=line["amount"], currency=(price or {}).get("currency"),
                    quantity=line["quantity"], price=price, period=line["period"], description=line["description"],
                    subscription=sub_id, subscription_item=item, invoice_item=ii, proration=line["proration"],
                    discountable=line.get("discountable", not line["proration"]), preview=not save)


def build_invoice(ctx: RequestContext, sub: dict[str, Any], lines: list[dict[str, Any]], *, reason: str, now: int,
                  discount_id: str | None = None, save: bool = True) -> dict[str, Any]:
    """A draft invoice for ``sub`` (not saved); ``discount_id``: the discount in force
    (``billing_cycle.discount_in_force``), whose share of each line is worked out here (``discount_amounts``) and
    recomputed with the invoice's totals whenever a line is added to the draft."""
    invoice_id = ctx.new_id("in") if save else "upcoming_in_" + ctx.emulator.ids.token("preview", 24)
    customer = ctx.find("customer", sub["customer"]) or {}
    settings = sub.get("payment_settings") or {}
    subtotal = total = sum(line["amount"] for line in lines)  # billing_tax.apply sets them with the discount
    periods = [line["period"] for line in lines if not line["proration"]] or [(now, now)]
    stored = ctx.find("discount", discount_id) if discount_id else None
    invoice = {
        "id": invoice_id, "object": "invoice", "account_country": "US", "account_name": "Stripe emulator",
        "account_tax_ids": None, "amount_due": max(total, 0), "amount_overpaid": 0, "amount_paid": 0,
        "amount_remaining": max(total, 0), "amount_shipping": 0, "application": None, "attempt_count": 0,
        "attempted": False, "auto_advance": True,
        "automatic_tax": {"disabled_reason": None, "enabled": False, "liability": None, "provider": None,
                          "status": None},
        "automatically_finalizes_at": None, "billing_reason": reason,
        "collection_method": sub["collection_method"], "created": now, "currency": sub["currency"],
        "custom_fields": None, "customer": sub["customer"], "customer_account": None,
        "customer_address": customer.get("address"), "customer_email": customer.get("email"),
        "customer_name": customer.get("name"), "customer_phone": customer.get("phone"),
        "customer_shipping": customer.get("shipping"), "customer_tax_exempt": customer.get("tax_exempt") or "none",
        "customer_tax_ids": invoice_entries(ctx, sub["customer"]),
        "default_payment_method": None, "default_source": None, "default_tax_rates": [], "description": None,
        "discounts": [],  # set below when the discount takes something off
        # a sent invoice is due the subscription's days_until_due after it is made (first or renewal alike)
        "due_date": (now + (sub.get("days_until_due") or 0) * DAY if sub["collection_method"] == "send_invoice"
                     else None),
        "effective_at": None,
        "ending_balance": None, "footer": None, "from_invoice": None,
        "hosted_invoice_url": f"{ctx.base_url}/i/{invoice_id}" if save else None, "invoice_pdf": None,
        "issuer": {"type": "self"}, "last_finalization_error": None, "latest_revision": None, "livemode": False,
        "metadata": {}, "next_payment_attempt": None, "number": None, "on_behalf_of": None,
        "parent": {"quote_details": None, "subscription_details": {"metadata": sub["metadata"],
                                                                   "subscription": sub["id"]},
                   "type": "subscription_details"},
        # the subscription's payment method types and options, as Stripe provides them to every invoice it makes
        "payment_settings": {"default_mandate": None, "payment_method_options": settings.get("payment_method_options"),
                             "payment_method_types": settings.get("payment_method_types")},
        "period_end": max(p[0] for p in periods), "period_start": min(p[0] for p in periods),
        "post_payment_credit_notes_amount": 0, "pre_payment_credit_notes_amount": 0, "receipt_number": None,
        "rendering": None, "shipping_cost": None, "shipping_details": None, "starting_balance": 0,
        "statement_descriptor": None, "status": "draft",
        "status_transitions": {"finalized_at": None, "marked_uncollectible_at": None, "paid_at": None,
                               "voided_at": None},
        "subtotal": subtotal, "subtotal_excluding_tax": subtotal, "test_clock": sub.get("test_clock"),
        "total": total, "total_discount_amounts": [],
        "total_excluding_tax": total, "total_pretax_credit_amounts": [], "total_taxes": [],
        "webhooks_delivered_at": now if save else None,
        "_lines": [_line(ctx, invoice_id, sub["id"], line, save) for line in lines],
        "_subscription": sub["id"], "_payment_intent": None, "_payments": [],
        # the discount in force, split over the lines it may discount (discount_amounts, applies_to.products)
        "_discount_rules": [discount_amounts.rule(stored, sub["currency"])] if stored else [],
    }
    discount_amounts.allocate(invoice)
    if stored and discount_amounts.total_of(invoice, stored["id"]):
        invoice["discounts"] = [stored["id"]]
    elif stored:  # it takes nothing off this invoice: not listed on it
        invoice["_discount_rules"] = []
        discount_amounts.allocate(invoice)
    # tax rates: each line's own (its subscription item's or invoice item's), else the subscription's defaults
    invoice["default_tax_rates"] = list(sub.get("default_tax_rates") or [])
    for built, spec in zip(invoice["_lines"], lines, strict=False):
        built["_tax_rates"] = list(spec.get("tax_rates") or [])
    billing_tax.apply(invoice)
    return invoice


def create_draft(ctx: RequestContext, sub: dict[str, Any], lines: list[dict[str, Any]], *, reason: str, now: int,
                 discount_id: str | None = None, finalizes_at: int | None = None) -> dict[str, Any]:
    """Save a draft invoice and emit ``invoice.created``.

    ``finalizes_at``: when Billing is to finalise it (``automatically_finalizes_at``, in the created event too);
    a first invoice with nothing due gets none, its caller finalises it at once."""
    invoice = build_invoice(ctx, sub, lines, reason=reason, now=now, discount_id=discount_id)
    if finalizes_at is not None and (invoice["amount_due"] > 0 or reason != "subscription_create"):
        invoice["automatically_finalizes_at"] = finalizes_at
    ctx.save(invoice)
    ctx.emit("invoice.created", invoice)
    return invoice


def finalize(ctx: RequestContext, invoice: dict[str, Any], now: int) -> dict[str, Any]:
    """Draft → open with a number (``invoice.finalized``); a zero total is paid at once, as on Stripe.

    A ``send_invoice`` invoice gets the PaymentIntent it is paid through here, as an invoice finalised through the
    API does (``payment_intent.created`` first, so ``invoice.finalized`` names it): its hosted page and a
    client-side confirm pay it. One charged automatically gets its PaymentIntent from the caller (``collect``)."""
    count = sum(1 for i in ctx.store.scan("invoice") if i.get("number"))
    invoice.update({"status": "open", "number": f"EMU-{count + 1:04d}", "effective_at": now,
                    "automatically_finalizes_at": None,
                    "customer_tax_ids": invoice_entries(ctx, invoice["customer"]),
                    "status_transitions": {**invoice["status_transitions"], "finalized_at": now}})
    if invoice["collection_method"] == "send_invoice" and invoice["amount_due"] > 0:
        invoice_lifecycle.open_intent(ctx, invoice, f"Payment for Invoice {invoice['number']}")
    ctx.save(invoice)
    ctx.emit("invoice.finalized", invoice)
    if invoice["amount_due"] == 0:
        invoice_lifecycle.record_payment(ctx, invoice, None, 0)
    return invoice


def open_intent(ctx: RequestContext, invoice: dict[str, Any], description: str) -> dict[str, Any]:
    """The PaymentIntent an open invoice is paid through (created unconfirmed, as ``default_incomplete`` leaves it),
    recorded as the invoice's open default payment; it saves the card for the renewals (``off_session``)."""
    return invoice_lifecycle.open_intent(ctx, invoice, description, setup_future_usage="off_session")


def attempt(ctx: RequestContext, invoice: dict[str, Any], pm_id: str | None, now: int, description: str
            ) -> StripeError | None:
    """Charge an open invoice off-session with ``pm_id``; the card error when it fails (kept, not raised)."""

    if invoice["status"] != "open" or invoice["amount_due"] == 0:
        return None
    invoice["attempted"], invoice["attempt_count"] = True, invoice["attempt_count"] + 1
    if not pm_id:
        error: StripeError | None = StripeError("This customer has no attached payment source or default payment method. Please "
                            "consider adding a default payment method.", code="resource_missing")
        ctx.save(invoice)
        ctx.emit("invoice.payment_failed", invoice)
        return error
    pi = ctx.find("payment_intent", invoice["_payment_intent"] or "") or open_intent(ctx, invoice, description)
    ctx.save(invoice)
    pi, error = intents.confirm_intent(ctx, pi, {"payment_method": pm_id, "off_session": "true"})
    invoice.update(ctx.get("invoice", invoice["id"]))  # the success hook may have paid it already
    if error is not None or pi["status"] != "succeeded":
        ctx.emit("invoice.payment_failed", invoice)
        return error or StripeError("This payment requires authentication.", status=402, type="card_error",
                                    code="authentication_required")
    return None
