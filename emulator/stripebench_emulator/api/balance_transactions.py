"""Balance transactions: made when a charge is captured or refunded (fees like Stripe's US card pricing); retrieve,
list. Internal API: ``record(ctx, source_id, amount, currency, kind) -> txn id``.
"""

from __future__ import annotations

from typing import Any

from stripebench_emulator.model.context import LIST_PARAMS, RequestContext
from stripebench_emulator.model.params import Str
from stripebench_emulator.model.registry import Resource

resource = Resource("balance_transaction", prefix="txn", noun="balance transaction", shallow_render=True)
PAYOUT_DELAY = 2 * 86400  # funds become available two days later


def record(ctx: RequestContext, source_id: str, amount: int, currency: str, kind: str = "charge") -> str:
    """Store a balance transaction for a capture (``charge``) or ``refund``; returns its id."""
    fee = round(amount * 0.029) + 30 if kind == "charge" else 0
    now = ctx.now()
    txn = {
        "id": ctx.new_id("txn"), "object": "balance_transaction", "amount": amount, "available_on": now + PAYOUT_DELAY,
        "created": now, "currency": currency, "description": None, "exchange_rate": None, "fee": fee,
        "fee_details": ([{"amount": fee, "application": None, "currency": currency,
                          "description": "Stripe processing fees", "type": "stripe_fee"}] if fee else []),
        "net": amount - fee, "reporting_category": kind, "source": source_id, "status": "pending", "type": kind,
    }
    ctx.store.put(txn, copy=False)  # built here and never changed: stored as is, saving a deep copy
    return txn["id"]


@resource.renderer
def render_txn(obj: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
    if ctx.now() >= obj["available_on"]:
        obj["status"] = "available"
    return obj


@resource.route("GET", "/v1/balance_transactions/{id}")
def retrieve(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Retrieve a balance transaction."""
    return ctx.get("balance_transaction", id)


@resource.route("GET", "/v1/balance_transactions", params={**LIST_PARAMS, "source": Str(), "type": Str(),
                                                          "currency": Str(), "payout": Str()})
def list_transactions(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """List balance transactions by ``source`` / ``type`` / ``currency``."""
    source, kind, currency = params.get("source"), params.get("type"), params.get("currency")
    return ctx.list_page("balance_transaction", params, "/v1/balance_transactions",
                         where=lambda t: (source is None or t["source"] == source) and (kind is None or t["type"] == kind)
                         and (currency is None or t["currency"] == currency))
