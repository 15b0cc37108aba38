"""Charges: made by payment intents or directly (the legacy ``source`` API); retrieve, update, list, capture.

Charges are made and captured by ``rules/charging.py``.
Before API version 2022-11-15 a charge embeds its ``refunds`` list; from then on only when expanded.
"""

from __future__ import annotations

from typing import Any

from stripebench_emulator.model import versions
from stripebench_emulator.model.context import LIST_PARAMS, RequestContext
from stripebench_emulator.model.errors import StripeError, invalid
from stripebench_emulator.model.fields import apply_metadata
from stripebench_emulator.model.params import Bool, Currency, Int, Metadata, Str
from stripebench_emulator.model.registry import Resource
from stripebench_emulator.rules import charging, intents, methods

resource = Resource("charge", prefix="ch", noun="charge", includable={"refunds"},
                    expandable={"customer": "customer", "payment_intent": "payment_intent",
                                "balance_transaction": "balance_transaction",
                                "payment_method": "payment_method"},
                    render_before=versions.PAYMENT_INTENT_LATEST_CHARGE, shallow_render=True)


def refunds_list(ctx: RequestContext, charge_id: str) -> dict[str, Any]:
    """The ``refunds`` sub-list of a charge."""
    data = [ctx.render(r) for r in ctx.store.scan("refund") if r.get("charge") == charge_id]
    return {"object": "list", "data": data, "has_more": False, "total_count": len(data),
            "url": f"/v1/charges/{charge_id}/refunds"}


@resource.renderer
def render_charge(obj: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
    if not ctx.version_at_least(versions.PAYMENT_INTENT_LATEST_CHARGE) or "refunds" in ctx.expand_paths:
        obj["refunds"] = refunds_list(ctx, obj["id"])
    return obj


@resource.route("POST", "/v1/charges", params={
    "amount": Int(min=1, required=True), "currency": Currency(required=True), "source": Str(), "customer": Str(),
    "description": Str(), "metadata": Metadata(), "capture": Bool(), "receipt_email": Str(),
    "statement_descriptor": Str(max_length=22), "statement_descriptor_suffix": Str(max_length=22),
    "transfer_group": Str()})
def create(ctx: RequestContext, params: dict[str, Any]) -> Any:
    """The legacy Charges API: charge a token (``tok_visa``…), a PaymentMethod, or the customer's default card."""

    customer = ctx.get("customer", params["customer"], param="customer") if params.get("customer") else None
    source = params.get("source")
    if not source and customer:
        source = (customer.get("invoice_settings") or {}).get("default_payment_method") or customer.get("default_source")
    if not source:
        if customer:
            raise StripeError("Cannot charge a customer that has no active card", param="card", code="missing",
                              status=402, type="card_error")
        raise StripeError("Must provide source or customer.", code="parameter_missing", param="source")
    pm = methods.resolve(ctx, source, param="source")
    if pm.get("_is_card") and pm.get("customer") != (customer or {}).get("id"):
        raise StripeError(f"Customer {(customer or {}).get('id')} does not have a linked source with ID {source}."
                          if customer else f"Cannot charge a customer's card ({source}) without its customer; pass "
                          "customer as well.", param="source", code="missing", status=404 if customer else 400)
    card = methods.test_card(pm)
    stand_in = {"id": None, "amount": params["amount"], "currency": params["currency"],
                "customer": customer["id"] if customer else None, "description": params.get("description"),
                "metadata": {k: v for k, v in (params.get("metadata") or {}).items() if v is not None},
                "receipt_email": params.get("receipt_email"), "shipping": None,
                "statement_descriptor": params.get("statement_descriptor"),
                "statement_descriptor_suffix": params.get("statement_descriptor_suffix")}
    succeeded = card.outcome == "success"
    charge = charging.new_charge(ctx, stand_in, pm, card, succeeded, capture=params.get("capture", True))
    if pm.get("_is_card"):  # a legacy card source: the charge embeds the card, as Stripe's Charges API does
        charge["source"] = {k: v for k, v in ctx.get("card", pm["id"]).items() if not k.startswith("_")}
        ctx.save(charge)
    if not succeeded:
        return card.decline_error(charge=charge["id"])
    return charge


@resource.route("GET", "/v1/charges/{id}")
def retrieve(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Retrieve a charge."""
    return ctx.get("charge", id)


@resource.route("POST", "/v1/charges/{id}", params={"description": Str(emptyable=True), "metadata": Metadata(),
                                                   "receipt_email": Str(emptyable=True)})
def update(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Update description, metadata or receipt_email."""
    charge = ctx.get("charge", id)
    before = ctx.get("charge", id)
    for key in ("description", "receipt_email"):
        if key in params:
            charge[key] = params[key]
    if "metadata" in params:
        charge["metadata"] = apply_metadata(charge.get("metadata"), params["metadata"])
    ctx.save(charge)
    ctx.emit("charge.updated", charge, previous=before)
    return charge


@resource.route("POST", "/v1/charges/{id}/capture", params={"amount": Int(min=1)})
def capture(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Capture an uncaptured charge through its payment intent."""
    charge = ctx.get("charge", id)
    if charge["captured"] or charge["status"] != "succeeded":
        raise StripeError(f"Charge {id} has already been captured.", code="charge_already_captured")
    if charge["payment_intent"] is None:  # a direct charge (POST /v1/charges with capture=false)
        amount = params.get("amount", charge["amount"])
        if amount > charge["amount"]:
            raise invalid(f"Amount must be no more than {charge['amount']} (the amount authorized).", param="amount",
                          code="amount_too_large")
        return charging.capture_charge(ctx, charge, amount)
    pi = ctx.get("payment_intent", charge["payment_intent"])
    intents.capture_intent(ctx, pi, params.get("amount"))
    return ctx.get("charge", id)


@resource.route("GET", "/v1/charges", params={**LIST_PARAMS, "customer": Str(), "payment_intent": Str(),
                                             "transfer_group": Str()})
def list_charges(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """List charges, filtered by ``customer`` / ``payment_intent``."""
    customer, pi = params.get("customer"), params.get("payment_intent")
    return ctx.list_page("charge", params, "/v1/charges",
                         where=lambda c: (customer is None or c.get("customer") == customer)
                         and (pi is None or c.get("payment_intent") == pi))
