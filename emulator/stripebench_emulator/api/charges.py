"""Charges: made by payment intents or directly (the legacy ``source`` API); retrieve, update, list, capture.

Internal API: ``new_charge(ctx, pi, pm, card, succeeded, capture) -> charge`` (saves it and emits
``charge.succeeded`` / ``charge.failed``); ``capture_charge(ctx, charge, amount)``; ``for_payment_intent(ctx, pi_id)``.
Before API version 2022-11-15 a charge embeds its ``refunds`` list; from then on only when expanded.
"""

from __future__ import annotations

from typing import Any

from stripebench_emulator.model import versions
from stripebench_emulator.model.context import LIST_PARAMS, RequestContext
from stripebench_emulator.model.errors import StripeError, invalid
from stripebench_emulator.model.params import Bool, Currency, Int, Metadata, Str
from stripebench_emulator.model.registry import Resource
from stripebench_emulator.api import balance_transactions, cards
from stripebench_emulator.model.fields import apply_metadata

resource = Resource("charge", prefix="ch", noun="charge", includable={"refunds"},
                    expandable={"customer": "customer", "payment_intent": "payment_intent",
                                "balance_transaction": "balance_transaction",
                                "payment_method": "payment_method"},
                    render_before=versions.PAYMENT_INTENT_LATEST_CHARGE, shallow_render=True)


def new_charge(ctx: RequestContext, pi: dict[str, Any], pm: dict[str, Any], card: cards.TestCard, succeeded: bool,
               capture: bool = True) -> dict[str, Any]:
    """Record the charge a confirmation made (failed for a decline) and emit its event."""
    failure = cards.DECLINES[card.decline or "generic_decline"] if not succeeded else None
    card_hash = pm["card"]
    charge_id = ctx.new_id("ch")
    charge: dict[str, Any] = {
        "id": charge_id, "object": "charge", "amount": pi["amount"],
        "amount_captured": pi["amount"] if succeeded and capture else 0, "amount_refunded": 0,
        "application": None, "application_fee": None, "application_fee_amount": None,
        "balance_transaction": None,
        "billing_details": pm.get("billing_details"), "calculated_statement_descriptor": "STRIPEBENCH",
        "captured": bool(succeeded and capture), "created": ctx.now(), "currency": pi["currency"],
        "customer": pi.get("customer"), "description": pi.get("description"), "disputed": False,
        "failure_balance_transaction": None, "failure_code": failure[0] if failure else None,
        "failure_message": failure[2] if failure else None, "fraud_details": {}, "livemode": False,
        "metadata": dict(pi.get("metadata") or {}), "on_behalf_of": None,
        "outcome": {
            "network_status": "approved_by_network" if succeeded else "declined_by_network",
            "reason": None if succeeded else (failure[1] if failure else None),
            "risk_level": "normal", "risk_score": 32,
            "seller_message": "Payment complete." if succeeded else "The bank did not return any further details "
                                                                    "with this decline.",
            "type": "authorized" if succeeded else "issuer_declined",
        },
        "paid": succeeded, "payment_intent": pi["id"], "payment_method": pm["id"],
        "payment_method_details": {"card": {
            "amount_authorized": pi["amount"] if succeeded else None, "brand": card_hash["brand"],
            "checks": card_hash["checks"], "country": card_hash["country"], "exp_month": card_hash["exp_month"],
            "exp_year": card_hash["exp_year"], "fingerprint": card_hash["fingerprint"],
            "funding": card_hash["funding"], "installments": None, "last4": card_hash["last4"], "mandate": None,
            "network": card_hash["brand"], "three_d_secure": None, "wallet": None,
        }, "type": "card"},
        "receipt_email": pi.get("receipt_email"), "receipt_number": None,
        "receipt_url": f"{ctx.base_url}/receipts/{charge_id}", "refunded": False, "review": None,
        "shipping": pi.get("shipping"), "source": None, "source_transfer": None,
        "statement_descriptor": pi.get("statement_descriptor"),
        "statement_descriptor_suffix": pi.get("statement_descriptor_suffix"),
        "status": "succeeded" if succeeded else "failed", "transfer_data": None, "transfer_group": None,
    }
    if succeeded and capture:
        charge["balance_transaction"] = balance_transactions.record(ctx, charge_id, pi["amount"], pi["currency"])
    ctx.save(charge)
    ctx.emit("charge.succeeded" if succeeded else "charge.failed", charge)
    return charge


def capture_charge(ctx: RequestContext, charge: dict[str, Any], amount: int) -> dict[str, Any]:
    """Capture ``amount`` of an authorised charge; the uncaptured rest counts as refunded (as on Stripe)."""
    charge["captured"] = True
    charge["amount_captured"] = amount
    charge["amount_refunded"] = charge["amount"] - amount
    charge["balance_transaction"] = balance_transactions.record(ctx, charge["id"], amount, charge["currency"])
    ctx.save(charge)
    ctx.emit("charge.captured", charge)
    return charge


def for_payment_intent(ctx: RequestContext, pi_id: str) -> list[dict[str, Any]]:
    """The charges a payment intent made, newest first (stored objects: read only)."""
    return [c for c in ctx.store.scan("charge") if c.get("payment_intent") == pi_id]


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
    from stripebench_emulator.api import payment_methods

    customer = ctx.get("customer", params["customer"], param="customer") if params.get("customer") else None
    source = params.get("source")
    if not source and customer:
        source = (customer.get("invoice_settings") or {}).get("default_payment_method") or customer.get("default_source")
    if not source:
        if customer:
            raise StripeError("Cannot charge a customer that has no active card", param="card", code="missing",
                              status=402, type="card_error")
        raise StripeError("Must provide source or customer.", code="parameter_missing", param="source")
    pm = payment_methods.resolve(ctx, source, param="source")
    if pm.get("_is_card") and pm.get("customer") != (customer or {}).get("id"):
        raise StripeError(f"Customer {(customer or {}).get('id')} does not have a linked source with ID {source}."
                          if customer else f"Cannot charge a customer's card ({source}) without its customer; pass "
                          "customer as well.", param="source", code="missing", status=404 if customer else 400)
    card = payment_methods.test_card(pm)
    stand_in = {"id": None, "amount": params["amount"], "currency": params["currency"],
                "customer": customer["id"] if customer else None, "description": params.get("description"),
                "metadata": {k: v for k, v in (params.get("metadata") or {}).items() if v is not None},
                "receipt_email": params.get("receipt_email"), "shipping": None,
                "statement_descriptor": params.get("statement_descriptor"),
                "statement_descriptor_suffix": params.get("statement_descriptor_suffix")}
    succeeded = card.outcome == "success"
    charge = new_charge(ctx, stand_in, pm, card, succeeded, capture=params.get("capture", True))
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
    from stripebench_emulator.api import payment_intents

    charge = ctx.get("charge", id)
    if charge["captured"] or charge["status"] != "succeeded":
        raise StripeError(f"Charge {id} has already been captured.", code="charge_already_captured")
    if charge["payment_intent"] is None:  # a direct charge (POST /v1/charges with capture=false)
        amount = params.get("amount", charge["amount"])
        if amount > charge["amount"]:
            raise invalid(f"Amount must be no more than {charge['amount']} (the amount authorized).", param="amount",
                          code="amount_too_large")
        return capture_charge(ctx, charge, amount)
    pi = ctx.get("payment_intent", charge["payment_intent"])
    payment_intents.capture_intent(ctx, pi, params.get("amount"))
    return ctx.get("charge", id)


@resource.route("GET", "/v1/charges", params={**LIST_PARAMS, "customer": Str(), "payment_intent": Str(),
                                             "transfer_group": Str()})
def list_charges(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """List charges, filtered by ``customer`` / ``payment_intent``."""
    customer, pi = params.get("customer"), params.get("payment_intent")
    return ctx.list_page("charge", params, "/v1/charges",
                         where=lambda c: (customer is None or c.get("customer") == customer)
                         and (pi is None or c.get("payment_intent") == pi))
