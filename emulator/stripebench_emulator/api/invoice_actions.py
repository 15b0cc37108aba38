"""Invoice lifecycle: finalize, pay (card or ``paid_out_of_band``), void, mark_uncollectible, send, attach_payment.

Status moves as on Stripe: draft → open (finalize) → paid / void / uncollectible; an uncollectible invoice can
still be paid or voided. Partial payments (API 2025-05-28): each attached PaymentIntent becomes an invoice
payment; ``amount_paid`` grows and the invoice stays open until ``amount_remaining`` reaches zero.

What these routes do to an invoice is ``rules/invoice_lifecycle.py``.
"""

from __future__ import annotations

from typing import Any

from stripebench_emulator.api.invoices import resource
from stripebench_emulator.model.context import RequestContext
from stripebench_emulator.model.errors import StripeError, invalid, missing_param
from stripebench_emulator.model.params import Bool, Str
from stripebench_emulator.rules.invoice_lifecycle import (
    check_payable,
    finalize_invoice,
    new_payment,
    on_its_clock,
    pay_invoice,
    record_payment,
    void_invoice,
)


@resource.route("POST", "/v1/invoices/{id}/finalize", params={"auto_advance": Bool()})
def finalize(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Finalize a draft invoice."""
    invoice = ctx.get("invoice", id, param="invoice")
    if invoice["status"] != "draft":
        raise StripeError("This invoice is already finalized, you can't re-finalize a non-draft invoice.",
                          param="invoice")
    if "auto_advance" in params:
        invoice["auto_advance"] = params["auto_advance"]
    return finalize_invoice(on_its_clock(ctx, invoice), invoice)


@resource.route("POST", "/v1/invoices/{id}/pay", params={
    "paid_out_of_band": Bool(), "payment_method": Str(), "source": Str(), "off_session": Bool(), "forgive": Bool(),
    "mandate": Str(emptyable=True)})
def pay(ctx: RequestContext, params: dict[str, Any], id: str) -> Any:
    """Pay an open (or draft, finalized first) invoice with a card, or record it as paid out of band."""
    invoice = ctx.get("invoice", id, param="invoice")
    if params.get("paid_out_of_band") and (params.get("payment_method") or params.get("source")):
        raise invalid("You cannot pass `payment_method` or `source` when `paid_out_of_band` is true.",
                      param="paid_out_of_band")
    return pay_invoice(ctx, invoice, payment_method=params.get("payment_method") or params.get("source"),
                       paid_out_of_band=bool(params.get("paid_out_of_band")),
                       off_session=params.get("off_session", True))


@resource.route("POST", "/v1/invoices/{id}/void")
def void(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Void an open or uncollectible invoice that has taken no payment."""
    invoice = ctx.get("invoice", id, param="invoice")
    if invoice["status"] not in ("open", "uncollectible"):
        raise StripeError(f"You can only void open or uncollectible invoices; this invoice is {invoice['status']}.",
                          param="invoice")
    if invoice["amount_paid"]:
        raise StripeError("You can't void an invoice that has been partially paid.", param="invoice")
    return void_invoice(ctx, invoice)


@resource.route("POST", "/v1/invoices/{id}/mark_uncollectible")
def mark_uncollectible(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Mark an open invoice uncollectible (it may still be paid or voided later)."""
    invoice = ctx.get("invoice", id, param="invoice")
    if invoice["status"] != "open":
        raise StripeError(f"You can only mark open invoices as uncollectible; this invoice is {invoice['status']}.",
                          param="invoice")
    invoice.update(status="uncollectible",
                   status_transitions={**invoice["status_transitions"], "marked_uncollectible_at": ctx.now()})
    ctx.save(invoice)
    ctx.emit("invoice.marked_uncollectible", invoice)
    return invoice


@resource.route("POST", "/v1/invoices/{id}/send")
def send(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """'Email' a send_invoice invoice (no mail leaves the emulator; ``invoice.sent`` is emitted). A draft is
    finalised first, as Stripe finalises drafts before sending them (``invoice.finalized``, then ``invoice.sent``).
    A paid invoice may be sent too (Stripe: its email then makes no reference to the payment)."""
    invoice = ctx.get("invoice", id, param="invoice")
    if invoice["status"] == "draft":
        finalize_invoice(on_its_clock(ctx, invoice), invoice)
    elif invoice["status"] not in ("open", "paid"):  # a paid one is sent as a receipt-like copy, as on Stripe
        raise StripeError(f"You can only send open or paid invoices; this one is {invoice['status']}.",
                          param="invoice")
    ctx.emit("invoice.sent", invoice)
    return invoice


@resource.route("POST", "/v1/invoices/{id}/attach_payment", params={"payment_intent": Str(), "payment_record": Str()})
def attach_payment(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Attach a PaymentIntent: credited now if it has succeeded, else once it does."""
    invoice = ctx.get("invoice", id, param="invoice")
    if params.get("payment_record"):
        raise invalid("The emulator does not model PaymentRecords; attach a payment_intent.", param="payment_record")
    if not params.get("payment_intent"):
        raise missing_param("payment_intent")
    check_payable(invoice)
    if invoice["status"] == "draft":
        raise StripeError("You can only attach payments to finalized invoices; finalize this invoice first.",
                          param="invoice")
    pi = ctx.get("payment_intent", params["payment_intent"], param="payment_intent")
    if pi.get("_invoice"):
        raise StripeError(f"The PaymentIntent {pi['id']} is already attached to invoice {pi['_invoice']}.",
                          param="payment_intent")
    if pi["status"] == "canceled":
        raise StripeError("A canceled PaymentIntent cannot be attached to an invoice.", param="payment_intent")
    if pi["currency"] != invoice["currency"]:
        raise invalid(f"The PaymentIntent's currency ({pi['currency']}) must match the invoice's currency "
                      f"({invoice['currency']}).", param="payment_intent")
    succeeded = pi["status"] == "succeeded"
    amount = pi["amount_received"] if succeeded else pi["amount"]
    # Attached payments still to succeed count against what remains; the open default payment does not (it is
    # canceled once the others pay the invoice).
    pending = sum(p["amount_requested"] for p in invoice.setdefault("_payments", [])
                  if p["status"] == "open" and not p["is_default"])
    if amount + pending > invoice["amount_remaining"]:
        raise StripeError(f"The PaymentIntent's amount ({amount}) is greater than the invoice's amount_remaining "
                          f"({invoice['amount_remaining'] - pending}).", param="payment_intent")
    pi["_invoice"] = invoice["id"]
    ctx.save(pi)
    if succeeded:
        record_payment(ctx, invoice, pi["id"], amount)
    else:
        new_payment(ctx, invoice, pi["id"], amount, default=False, paid=False)
        ctx.save(invoice)
    return invoice

