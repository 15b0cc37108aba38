"""Charges and the money they move: the charge a confirmation makes (failed for a decline), its capture, and the
balance transactions charges and refunds record."""

from __future__ import annotations

from typing import Any

from stripebench_emulator.model.context import RequestContext
from stripebench_emulator.rules import cards

PAYOUT_DELAY = 2 * 86400  # funds become available two days later


def record(ctx: RequestContext, source_id: str, amount: int, currency: str, kind: str = "charge") -> str:
    """Store a balance transaction for a capture (``charge``) or ``refund``; returns its id."""
    fee = round(amount * 0.029) + 30 if kind == "charge" else 0
    now = ctx.now()
    txn: dict[str, Any] = {
        "id": ctx.new_id("txn"), "object": "balance_transaction", "amount": amount, "available_on": now + PAYOUT_DELAY,
        "created": now, "currency": currency, "description": None, "exchange_rate": None, "fee": fee,
        "fee_details": ([{"amount": fee, "application": None, "currency": currency,
                          "description": "Stripe processing fees", "type": "stripe_fee"}] if fee else []),
        "net": amount - fee, "reporting_category": kind, "source": source_id, "status": "pending", "type": kind,
    }
    ctx.store.put(txn, copy=False)  # built here and never changed: stored as is, saving a deep copy
    return txn["id"]


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
        charge["balance_transaction"] = record(ctx, charge_id, pi["amount"], pi["currency"])
    ctx.save(charge)
    ctx.emit("charge.succeeded" if succeeded else "charge.failed", charge)
    return charge


def capture_charge(ctx: RequestContext, charge: dict[str, Any], amount: int) -> dict[str, Any]:
    """Capture ``amount`` of an authorised charge; the uncaptured rest counts as refunded (as on Stripe)."""
    charge["captured"] = True
    charge["amount_captured"] = amount
    charge["amount_refunded"] = charge["amount"] - amount
    charge["balance_transaction"] = record(ctx, charge["id"], amount, charge["currency"])
    ctx.save(charge)
    ctx.emit("charge.captured", charge)
    return charge


def for_payment_intent(ctx: RequestContext, pi_id: str) -> list[dict[str, Any]]:
    """The charges a payment intent made, newest first (stored objects: read only)."""
    return [c for c in ctx.store.scan("charge") if c.get("payment_intent") == pi_id]
