"""Balance transactions: made when a charge is captured or refunded (fees like Stripe's US card pricing); retrieve,
list. They are recorded by ``charging.record``.
"""

from __future__ import annotations

from typing import Any

from stripebench_emulator.model.context import LIST_PARAMS, RequestContext
from stripebench_emulator.model.params import Str
from stripebench_emulator.model.registry import Resource

resource = Resource("balance_transaction", prefix="txn", noun="balance transaction", shallow_render=True)


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
