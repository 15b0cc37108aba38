"""Refunds: create (by payment_intent or charge, full or partial), retrieve, update, list.

Internal API: ``refund_charge(ctx, charge, amount=None, reason=None, metadata=None) -> refund`` (emits
``refund.created`` and ``charge.refunded``; updates the charge's ``amount_refunded`` / ``refunded``).
"""

from __future__ import annotations

from typing import Any

from stripebench_emulator.model.context import LIST_PARAMS, RequestContext
from stripebench_emulator.model.errors import StripeError, invalid
from stripebench_emulator.model.fields import apply_metadata
from stripebench_emulator.model.params import Bool, Enum, Int, Metadata, Str
from stripebench_emulator.model.registry import Resource
from stripebench_emulator.rules import charging

resource = Resource("refund", prefix="re", noun="refund",
                    expandable={"charge": "charge", "payment_intent": "payment_intent",
                                "balance_transaction": "balance_transaction"})


def refund_charge(ctx: RequestContext, charge: dict[str, Any], amount: int | None = None, reason: str | None = None,
                  metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """Refund ``amount`` (default: what is left) of a captured charge."""
    if charge["status"] != "succeeded":
        raise invalid(f"Charge {charge['id']} has a status of {charge['status']} and cannot be refunded.",
                      param="charge")
    remaining = charge["amount"] - charge["amount_refunded"]
    if remaining <= 0 or charge.get("refunded"):
        raise StripeError(f"Charge {charge['id']} has already been refunded.", code="charge_already_refunded")
    amount = remaining if amount is None else amount
    if amount > remaining:
        raise invalid(f"Refund amount ({_money(amount, charge)}) is greater than unrefunded amount on charge "
                      f"({_money(remaining, charge)})", param="amount", code="amount_too_large")
    refund_id = ctx.new_id("re")
    refund = {
        "id": refund_id, "object": "refund", "amount": amount,
        "balance_transaction": charging.record(ctx, refund_id, -amount, charge["currency"], "refund"),
        "charge": charge["id"], "created": ctx.now(), "currency": charge["currency"],
        "destination_details": {"card": {"reference_status": "pending", "reference_type": "acquirer_reference_number",
                                         "type": "refund"}, "type": "card"},
        "metadata": apply_metadata({}, metadata or {}), "payment_intent": charge.get("payment_intent"),
        "reason": reason, "receipt_number": None, "source_transfer_reversal": None, "status": "succeeded",
        "transfer_reversal": None,
    }
    ctx.save(refund)
    ctx.emit("refund.created", refund)
    before = dict(charge)
    charge["amount_refunded"] += amount
    charge["refunded"] = charge["amount_refunded"] >= charge["amount"]
    ctx.save(charge)
    ctx.emit("charge.refunded", charge, previous=before)
    return refund


def _money(amount: int, charge: dict[str, Any]) -> str:
    return f"${amount / 100:.2f}" if charge["currency"] == "usd" else f"{amount} {charge['currency']}"


CREATE = {"payment_intent": Str(), "charge": Str(), "amount": Int(min=1), "metadata": Metadata(),
          "reason": Enum("duplicate", "fraudulent", "requested_by_customer"), "instructions_email": Str(),
          "refund_application_fee": Bool(), "reverse_transfer": Bool(), "currency": Str(), "customer": Str(),
          "origin": Str()}


@resource.route("POST", "/v1/refunds", params=CREATE)
def create(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Refund a charge, or a payment intent's latest successful charge."""
    if params.get("charge"):
        charge = ctx.get("charge", params["charge"], param="charge")
        if params.get("payment_intent") and charge.get("payment_intent") != params["payment_intent"]:
            raise invalid("The charge does not belong to that payment intent.", param="payment_intent")
    elif params.get("payment_intent"):
        pi = ctx.get("payment_intent", params["payment_intent"], param="payment_intent")
        if pi["status"] != "succeeded" or not pi.get("latest_charge"):
            raise invalid(f"This PaymentIntent ({pi['id']}) does not have a successful charge to refund.",
                          param="payment_intent")
        charge = ctx.get("charge", pi["latest_charge"])
    else:
        raise invalid("One of the following params should be provided for this request: payment_intent or charge.",
                      param="charge", code="parameter_missing")
    return refund_charge(ctx, charge, params.get("amount"), params.get("reason"), params.get("metadata"))


@resource.route("GET", "/v1/refunds/{id}")
def retrieve(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Retrieve a refund."""
    return ctx.get("refund", id)


@resource.route("POST", "/v1/refunds/{id}", params={"metadata": Metadata()})
def update(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Update a refund's metadata."""
    refund = ctx.get("refund", id)
    before = ctx.get("refund", id)
    if "metadata" in params:
        refund["metadata"] = apply_metadata(refund.get("metadata"), params["metadata"])
    ctx.save(refund)
    ctx.emit("refund.updated", refund, previous=before)
    return refund


@resource.route("GET", "/v1/refunds", params={**LIST_PARAMS, "charge": Str(), "payment_intent": Str()})
def list_refunds(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """List refunds, filtered by ``charge`` / ``payment_intent``."""
    charge, pi = params.get("charge"), params.get("payment_intent")
    return ctx.list_page("refund", params, "/v1/refunds",
                         where=lambda r: (charge is None or r.get("charge") == charge)
                         and (pi is None or r.get("payment_intent") == pi))


@resource.route("GET", "/v1/charges/{charge}/refunds", params=LIST_PARAMS)
def list_charge_refunds(ctx: RequestContext, params: dict[str, Any], charge: str) -> dict[str, Any]:
    """A charge's refunds."""
    ctx.get("charge", charge, param="charge")
    return ctx.list_page("refund", params, f"/v1/charges/{charge}/refunds", where=lambda r: r.get("charge") == charge)
