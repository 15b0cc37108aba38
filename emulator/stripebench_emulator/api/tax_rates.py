"""Tax rates: create, retrieve, update, list (percentages applied by invoices' and Checkout's ``tax_rates``)."""

from __future__ import annotations

from typing import Any

from stripebench_emulator.model.context import LIST_PARAMS, RequestContext
from stripebench_emulator.model.errors import StripeError
from stripebench_emulator.model.fields import apply_metadata
from stripebench_emulator.model.params import Bool, Enum, Metadata, Num, Param, Str
from stripebench_emulator.model.registry import Resource

resource = Resource("tax_rate", prefix="txr", noun="tax rate")

TAX_TYPE = Enum("amusement_tax", "communications_tax", "gst", "hst", "igst", "jct", "lease_tax", "pst", "qst",
                "retail_delivery_fee", "rst", "sales_tax", "service_tax", "vat", emptyable=True)
EDITABLE: dict[str, Param] = {
    "active": Bool(), "country": Str(emptyable=True), "description": Str(emptyable=True),
    "display_name": Str(max_length=50), "jurisdiction": Str(emptyable=True, max_length=50), "metadata": Metadata(),
    "state": Str(emptyable=True), "tax_type": TAX_TYPE,
}


def _number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


@resource.route("POST", "/v1/tax_rates", params={**EDITABLE, "display_name": Str(required=True, max_length=50),
                                                "inclusive": Bool(required=True),
                                                "percentage": Num(required=True, min=0, max=100)})
def create(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create a tax rate (``display_name``, ``percentage``, ``inclusive`` required)."""
    obj = {
        "id": ctx.new_id("txr"), "object": "tax_rate", "active": params.get("active", True),
        "country": params.get("country"), "created": ctx.now(), "description": params.get("description"),
        "display_name": params["display_name"], "effective_percentage": _number(params["percentage"]),
        "flat_amount": None, "inclusive": params["inclusive"], "jurisdiction": params.get("jurisdiction"),
        "jurisdiction_level": None, "livemode": False, "metadata": apply_metadata({}, params.get("metadata") or {}),
        "percentage": _number(params["percentage"]), "rate_type": "percentage", "state": params.get("state"),
        "tax_type": params.get("tax_type"),
    }
    ctx.save(obj)
    ctx.emit("tax_rate.created", obj)
    return obj


@resource.route("GET", "/v1/tax_rates/{id}")
def retrieve(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Retrieve a tax rate."""
    return ctx.get("tax_rate", id, param="tax_rate")


@resource.route("POST", "/v1/tax_rates/{id}", params={**EDITABLE, "percentage": Num(), "inclusive": Bool()})
def update(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Update a tax rate's labels, metadata or active flag (its percentage and inclusiveness are fixed)."""
    obj = ctx.get("tax_rate", id, param="tax_rate")
    before = ctx.get("tax_rate", id, param="tax_rate")
    for fixed in ("percentage", "inclusive"):
        if fixed in params:
            raise StripeError(f"You cannot update the `{fixed}` of a tax rate; create a new tax rate instead.",
                              param=fixed)
    for key in ("active", "country", "description", "display_name", "jurisdiction", "state", "tax_type"):
        if key in params:
            obj[key] = params[key]
    if "metadata" in params:
        obj["metadata"] = apply_metadata(obj["metadata"], params["metadata"])
    ctx.save(obj)
    ctx.emit("tax_rate.updated", obj, previous=before)
    return obj


@resource.route("GET", "/v1/tax_rates", params={**LIST_PARAMS, "active": Bool(), "inclusive": Bool()})
def list_tax_rates(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """List tax rates, filtered by ``active`` / ``inclusive``."""
    return ctx.list_page("tax_rate", params, "/v1/tax_rates",
                         where=lambda t: ("active" not in params or t["active"] == params["active"])
                         and ("inclusive" not in params or t["inclusive"] == params["inclusive"]))
