"""Customer tax IDs: ``/v1/customers/{id}/tax_ids`` create, retrieve, delete, list; values checked per type.

Each type's value must look like that country's number (``eu_vat`` ``DE123456789``, ``us_ein`` ``12-3456789``…);
anything else is Stripe's ``tax_id_invalid``. EU, UK and Australian numbers start ``pending`` verification, as in
test mode; the other types have no verification (``unavailable``).
"""

from __future__ import annotations

import re
from typing import Any

from stripebench_emulator.model.context import LIST_PARAMS, RequestContext
from stripebench_emulator.model.errors import StripeError, no_such
from stripebench_emulator.model.fields import deleted_stub
from stripebench_emulator.model.params import Enum, Str
from stripebench_emulator.model.registry import Resource

resource = Resource("tax_id", prefix="txi", noun="tax id", expandable={"customer": "customer"})

# type: (country or None when the value's prefix names it, value pattern)
FORMATS: dict[str, tuple[str | None, str]] = {
    "eu_vat": (None, r"(AT|BE|BG|CY|CZ|DE|DK|EE|EL|ES|FI|FR|HR|HU|IE|IT|LT|LU|LV|MT|NL|PL|PT|RO|SE|SI|SK|XI)[0-9A-Z]{2,12}"),
    "gb_vat": ("GB", r"GB(\d{9}|\d{12})"), "us_ein": ("US", r"\d{2}-\d{7}"), "au_abn": ("AU", r"\d{11}"),
    "ca_bn": ("CA", r"\d{9}"), "ch_vat": ("CH", r"CHE-\d{3}\.\d{3}\.\d{3} (MWST|TVA|IVA)"),
    "in_gst": ("IN", r"\d{2}[A-Z]{5}\d{4}[A-Z][1-9A-Z]Z[0-9A-Z]"), "jp_cn": ("JP", r"\d{13}"),
    "br_cnpj": ("BR", r"\d{2}\.\d{3}\.\d{3}/\d{4}-\d{2}"), "mx_rfc": ("MX", r"[A-Z&Ñ]{3,4}\d{6}[A-Z0-9]{3}"),
    "no_vat": ("NO", r"\d{9}MVA"), "nz_gst": ("NZ", r"\d{8,9}"), "sg_uen": ("SG", r"\d{8,9}[A-Z]"),
    "za_vat": ("ZA", r"4\d{9}"),
}
_VERIFIED_TYPES = {"eu_vat", "gb_vat", "au_abn"}


TAX_ID = {"type": Enum(*sorted(FORMATS), required=True), "value": Str(required=True)}


@resource.route("POST", "/v1/customers/{customer}/tax_ids", params=TAX_ID)
def create(ctx: RequestContext, params: dict[str, Any], customer: str) -> dict[str, Any]:
    """Add a tax ID to a customer."""
    owner = ctx.get("customer", customer, param="customer")
    return add(ctx, owner["id"], params["type"], params["value"])


def add(ctx: RequestContext, customer: str, kind: str, value: str, param: str = "value") -> dict[str, Any]:
    """Store a tax ID of ``kind`` for ``customer`` (its id) and announce it; ``tax_id_invalid`` on ``param`` when the
    value does not look like that type's number. Also what ``POST /v1/customers`` does with each ``tax_id_data``."""
    value = value.strip().upper().replace(" ", "") if kind != "ch_vat" else value.strip()
    country, pattern = FORMATS[kind]
    if not re.fullmatch(pattern, value):
        raise StripeError(f"Invalid value for {kind}.", param=param, code="tax_id_invalid")
    country = country or ("GR" if value[:2] == "EL" else "GB" if value[:2] == "XI" else value[:2])
    obj = {
        "id": ctx.new_id("txi"), "object": "tax_id", "country": country, "created": ctx.now(),
        "customer": customer, "customer_account": None, "livemode": False,
        "owner": {"customer": customer, "customer_account": None, "type": "customer"}, "type": kind,
        "value": value,
        "verification": {"status": "pending" if kind in _VERIFIED_TYPES else "unavailable", "verified_address": None,
                         "verified_name": None},
    }
    ctx.save(obj)
    ctx.emit("customer.tax_id.created", obj)
    return obj


def _owned(ctx: RequestContext, customer: str, tax_id: str) -> dict[str, Any]:
    ctx.get("customer", customer, param="customer")
    obj = ctx.find("tax_id", tax_id)
    if obj is None or obj.get("deleted") or obj["customer"] != customer:
        raise no_such("tax id", tax_id, param="id")
    return obj


@resource.route("GET", "/v1/customers/{customer}/tax_ids/{id}")
def retrieve(ctx: RequestContext, params: dict[str, Any], customer: str, id: str) -> dict[str, Any]:
    """Retrieve one of the customer's tax IDs."""
    return _owned(ctx, customer, id)


@resource.route("DELETE", "/v1/customers/{customer}/tax_ids/{id}")
def delete(ctx: RequestContext, params: dict[str, Any], customer: str, id: str) -> dict[str, Any]:
    """Remove a tax ID from the customer."""
    obj = _owned(ctx, customer, id)
    ctx.save({**obj, "deleted": True})
    ctx.emit("customer.tax_id.deleted", obj)
    return deleted_stub(obj)


@resource.route("GET", "/v1/customers/{customer}/tax_ids", params=LIST_PARAMS)
def list_tax_ids(ctx: RequestContext, params: dict[str, Any], customer: str) -> dict[str, Any]:
    """List a customer's tax IDs."""
    ctx.get("customer", customer, param="customer")
    return ctx.list_page("tax_id", params, f"/v1/customers/{customer}/tax_ids",
                         where=lambda t: t["customer"] == customer)
