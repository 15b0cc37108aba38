"""Payouts: create (from the available balance), retrieve, update, list, cancel; and ``GET /v1/balance``.

Funds become available two days after a capture (``charging.PAYOUT_DELAY``, on the emulator clock);
a payout larger than what is available is Stripe's ``balance_insufficient``. A payout is ``pending`` until its
``arrival_date`` (the next day) and ``paid`` from then on; only a pending payout can be canceled.
"""

from __future__ import annotations

from typing import Any

from stripebench_emulator.model.context import LIST_PARAMS, RequestContext
from stripebench_emulator.model.errors import StripeError
from stripebench_emulator.model.fields import apply_metadata
from stripebench_emulator.model.params import Currency, Enum, Int, Metadata, Str
from stripebench_emulator.model.registry import Resource

resource = Resource("payout", prefix="po", noun="payout", expandable={"balance_transaction": "balance_transaction"},
                    shallow_render=True)
balance_resource = Resource("balance", noun="balance")
ARRIVAL_DELAY = 86400
_INSUFFICIENT = ("You have insufficient funds in your Stripe account for this transfer. Your card balance is too "
                 "low. You can use the /v1/balance endpoint to view your Stripe balance (for more details, see "
                 "stripe.com/docs/api#balance).")


def _balances(ctx: RequestContext) -> dict[str, dict[str, int]]:
    """Per currency: ``available`` and ``pending`` amounts (payouts leave available at once)."""
    out: dict[str, dict[str, int]] = {}
    now = ctx.now()
    for txn in ctx.store.scan("balance_transaction"):
        bucket = out.setdefault(txn["currency"], {"available": 0, "pending": 0})
        bucket["available" if txn["type"] == "payout" or now >= txn["available_on"] else "pending"] += txn["net"]
    return out


@resource.renderer
def render(obj: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """``pending`` becomes ``paid`` once the emulator clock reaches ``arrival_date``."""
    if obj["status"] == "pending" and ctx.now() >= obj["arrival_date"]:
        obj["status"] = "paid"
    return obj


@resource.route("POST", "/v1/payouts", params={
    "amount": Int(min=1, required=True), "currency": Currency(required=True), "description": Str(),
    "destination": Str(), "metadata": Metadata(), "method": Enum("standard", "instant"),
    "source_type": Enum("bank_account", "card", "fpx"), "statement_descriptor": Str(max_length=22)})
def create(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Pay out part of the available balance to the account's bank."""
    available = _balances(ctx).get(params["currency"], {}).get("available", 0)
    if params["amount"] > available:
        raise StripeError(_INSUFFICIENT, code="balance_insufficient")
    now = ctx.now()
    payout_id = ctx.new_id("po")
    txn = {"id": ctx.new_id("txn"), "object": "balance_transaction", "amount": -params["amount"], "available_on": now,
           "created": now, "currency": params["currency"], "description": params.get("description") or "STRIPE PAYOUT",
           "exchange_rate": None, "fee": 0, "fee_details": [], "net": -params["amount"], "reporting_category": "payout",
           "source": payout_id, "status": "available", "type": "payout"}
    ctx.save(txn)
    obj = {
        "id": payout_id, "object": "payout", "amount": params["amount"], "application_fee": None,
        "application_fee_amount": None, "arrival_date": now + ARRIVAL_DELAY, "automatic": False,
        "balance_transaction": txn["id"], "created": now, "currency": params["currency"],
        "description": params.get("description") or "STRIPE PAYOUT",
        "destination": params.get("destination") or "ba_emulator", "failure_balance_transaction": None,
        "failure_code": None, "failure_message": None, "livemode": False,
        "metadata": apply_metadata({}, params.get("metadata") or {}), "method": params.get("method", "standard"),
        "original_payout": None, "payout_method": None, "reconciliation_status": "not_applicable",
        "reversed_by": None, "source_type": params.get("source_type", "card"),
        "statement_descriptor": params.get("statement_descriptor"), "status": "pending",
        "trace_id": {"status": "pending", "value": None}, "type": "bank_account",
    }
    ctx.save(obj)
    ctx.emit("payout.created", obj)
    return obj


@resource.route("GET", "/v1/payouts/{id}")
def retrieve(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Retrieve a payout."""
    return ctx.get("payout", id, param="payout")


@resource.route("POST", "/v1/payouts/{id}", params={"metadata": Metadata()})
def update(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Update a payout's metadata."""
    obj = ctx.get("payout", id, param="payout")
    before = ctx.get("payout", id, param="payout")
    if "metadata" in params:
        obj["metadata"] = apply_metadata(obj["metadata"], params["metadata"])
    ctx.save(obj)
    ctx.emit("payout.updated", obj, previous=before)
    return obj


@resource.route("POST", "/v1/payouts/{id}/cancel")
def cancel(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Cancel a pending payout; its amount returns to the available balance."""
    obj = ctx.get("payout", id, param="payout")
    if obj["status"] != "pending" or ctx.now() >= obj["arrival_date"]:
        raise StripeError("Payouts can only be canceled while they are pending.", param="payout")
    obj["status"] = "canceled"
    reversal = {"id": ctx.new_id("txn"), "object": "balance_transaction", "amount": obj["amount"],
                "available_on": ctx.now(), "created": ctx.now(), "currency": obj["currency"],
                "description": "REVERSAL OF PAYOUT", "exchange_rate": None, "fee": 0, "fee_details": [],
                "net": obj["amount"], "reporting_category": "payout_reversal", "source": obj["id"],
                "status": "available", "type": "payout"}
    ctx.save(reversal)
    obj["failure_balance_transaction"] = reversal["id"]
    ctx.save(obj)
    ctx.emit("payout.canceled", obj)
    return obj


@resource.route("GET", "/v1/payouts", params={**LIST_PARAMS, "status": Enum("pending", "paid", "failed",
                                                                            "canceled"), "destination": Str()})
def list_payouts(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """List payouts, filtered by ``status`` / ``destination``."""
    now = ctx.now()

    def status(p: dict[str, Any]) -> str:
        return "paid" if p["status"] == "pending" and now >= p["arrival_date"] else p["status"]

    return ctx.list_page("payout", params, "/v1/payouts",
                         where=lambda p: ("status" not in params or status(p) == params["status"])
                         and ("destination" not in params or p["destination"] == params["destination"]))


@balance_resource.route("GET", "/v1/balance")
def balance(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """The account balance per currency (available and pending)."""
    sums = _balances(ctx) or {"usd": {"available": 0, "pending": 0}}
    return {"object": "balance", "livemode": False,
            "available": [{"amount": v["available"], "currency": c, "source_types": {"card": v["available"]}}
                          for c, v in sorted(sums.items())],
            "pending": [{"amount": v["pending"], "currency": c, "source_types": {"card": v["pending"]}}
                        for c, v in sorted(sums.items())]}
