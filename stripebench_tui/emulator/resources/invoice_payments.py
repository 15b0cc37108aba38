"""Invoice Payments (API 2025-03-31 on): what paid an invoice, listed, retrieved, or as an invoice's ``payments``.

The emulator's invoices are paid at creation by one PaymentIntent (or by nothing when the total is zero), so an
invoice payment is derived from its invoice rather than stored: ``inpay_`` plus the invoice id's suffix, ``paid``,
``payment: {type: "payment_intent", payment_intent}`` (expandable, e.g. ``data.payment.payment_intent``).
"""

from __future__ import annotations

from typing import Any

from stripebench_tui.emulator.context import LIST_PARAMS, RequestContext
from stripebench_tui.emulator.errors import no_such
from stripebench_tui.emulator.params import Enum, Hash, Str
from stripebench_tui.emulator.registry import Resource

resource = Resource("invoice_payment", prefix="inpay", noun="invoice payment",
                    expandable={"invoice": "invoice", "payment.payment_intent": "payment_intent"})


def payments_of(invoice: dict[str, Any]) -> list[dict[str, Any]]:
    """The invoice's payments (its paying PaymentIntent, when it had one)."""
    if not invoice.get("_payment_intent"):
        return []
    paid = invoice["status"] == "paid"
    paid_at = (invoice.get("status_transitions") or {}).get("paid_at")
    return [{
        "id": "inpay_" + invoice["id"].removeprefix("in_"), "object": "invoice_payment",
        "amount_paid": invoice["amount_paid"] if paid else None, "amount_requested": invoice["amount_due"],
        "created": invoice["created"], "currency": invoice["currency"], "invoice": invoice["id"],
        "is_default": True, "livemode": False,
        "payment": {"payment_intent": invoice["_payment_intent"], "type": "payment_intent"},
        "status": "paid" if paid else "open",
        "status_transitions": {"canceled_at": None, "paid_at": paid_at if paid else None},
    }]


def payments_page(invoice: dict[str, Any]) -> dict[str, Any]:
    """``invoice.payments`` as Stripe includes it when expanded."""
    data = payments_of(invoice)
    return {"object": "list", "data": data, "has_more": False, "total_count": len(data),
            "url": f"/v1/invoice_payments?invoice={invoice['id']}"}


@resource.route("GET", "/v1/invoice_payments", params={
    **LIST_PARAMS, "invoice": Str(), "status": Enum("canceled", "open", "paid"),
    "payment": Hash({"type": Enum("payment_intent", "payment_record", required=True), "payment_intent": Str(),
                     "payment_record": Str()})})
def list_invoice_payments(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """List invoice payments, filtered by ``invoice``, ``status`` or ``payment[payment_intent]``."""
    invoices = ([ctx.get("invoice", params["invoice"], param="invoice")] if params.get("invoice")
                else list(ctx.store.scan("invoice")))
    wanted_pi = (params.get("payment") or {}).get("payment_intent")
    rows = [p for inv in invoices for p in payments_of(inv)
            if ("status" not in params or p["status"] == params["status"])
            and (wanted_pi is None or p["payment"]["payment_intent"] == wanted_pi)]
    return ctx.list_page("invoice_payment", {k: v for k, v in params.items() if k not in ("invoice", "status",
                                                                                          "payment")},
                         "/v1/invoice_payments", items=rows)


@resource.route("GET", "/v1/invoice_payments/{id}")
def retrieve(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Retrieve an invoice payment by id."""
    invoice = ctx.find("invoice", "in_" + id.removeprefix("inpay_")) if id.startswith("inpay_") else None
    for payment in payments_of(invoice) if invoice else []:
        return payment
    raise no_such("invoice payment", id, param="id")
