"""Invoice items (``/v1/invoiceitems``): one-off charges waiting for the customer's next invoice, or on a draft.

An item with ``invoice`` set is a line of that draft invoice (the line and the item are kept in step); without,
it is pending until an invoice includes it. Its own ``discounts`` (``invoice_discounts``) apply to its line before
the invoice's; ``discountable=false`` keeps the invoice's off it. From 2025-03-31 an item names its price under
``pricing`` (create with ``pricing[price]``); before, it carries ``price`` (create with ``price``) and ``unit_amount``.
"""

from __future__ import annotations

from typing import Any

from stripebench_emulator.api import invoice_discounts
from stripebench_emulator.model.context import LIST_PARAMS, RequestContext
from stripebench_emulator.model.errors import invalid, missing_param, unknown_param
from stripebench_emulator.model.fields import apply_metadata, deleted_stub
from stripebench_emulator.model.params import Array, Bool, Currency, Hash, Int, Metadata, Num, Param, Str
from stripebench_emulator.model.registry import Resource
from stripebench_emulator.model.versions import SUBSCRIPTION_PERIOD_ON_ITEMS
from stripebench_emulator.rules import billing_tax
from stripebench_emulator.rules.invoicing import describe, editable_draft, new_line, recompute

resource = Resource("invoiceitem", prefix="ii", noun="invoice item",
                    expandable={"customer": "customer", "invoice": "invoice", "discounts": "discount"})

PERIOD = Hash({"start": Int(min=0, required=True), "end": Int(min=0, required=True)})
FIELDS: dict[str, Param] = {
    "amount": Int(), "description": Str(emptyable=True), "discountable": Bool(), "metadata": Metadata(),
    "period": PERIOD, "quantity": Int(min=0), "unit_amount_decimal": Num(as_string=True),
    "price": Str(), "pricing": Hash({"price": Str()}), "tax_rates": Array(Str(), emptyable=True),
    "discounts": invoice_discounts.DISCOUNTS,
}


@resource.renderer
def render(obj: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """``pricing``/``parent`` from 2025-03-31; ``price`` (the whole object), ``plan``, ``unit_amount`` before."""
    obj["tax_rates"] = billing_tax.current(ctx, obj.get("tax_rates"))
    if ctx.version_at_least(SUBSCRIPTION_PERIOD_ON_ITEMS):
        return obj
    price = ctx.find("price", obj.get("_price") or "")
    for key in ("pricing", "parent", "net_amount", "quantity_decimal", "customer_account"):
        obj.pop(key, None)
    obj.update(price=ctx.render(price) if price else None, plan=None, subscription=None, subscription_item=None,
               unit_amount=obj["_unit_amount"], unit_amount_decimal=str(obj["_unit_amount"]))
    return obj


def _price_param(ctx: RequestContext, params: dict[str, Any]) -> str | None:
    """The price id the caller named, checked against the API version's parameter name."""
    recent = ctx.version_at_least(SUBSCRIPTION_PERIOD_ON_ITEMS)
    if recent and "price" in params:
        raise unknown_param("price")  # 2025-03-31 replaced it with pricing[price]
    if not recent and "pricing" in params:
        raise unknown_param("pricing")
    return (params.get("pricing") or {}).get("price") if recent else params.get("price")


def _set_amounts(ctx: RequestContext, item: dict[str, Any], params: dict[str, Any], price: dict[str, Any] | None) -> None:
    quantity = params.get("quantity", item.get("quantity", 1))
    if price is not None:
        if "amount" in params or "unit_amount_decimal" in params:
            raise invalid("You may only specify one of these parameters: amount, price.", param="amount")
        unit = price.get("unit_amount") or 0
        item.update(_price=price["id"], _unit_amount=unit, amount=unit * quantity, currency=price["currency"],
                    pricing={"price_details": {"price": price["id"], "product": price.get("product")},
                             "type": "price_details", "unit_amount_decimal": price.get("unit_amount_decimal")})
    elif "unit_amount_decimal" in params:
        unit = int(float(params["unit_amount_decimal"]))
        item.update(_unit_amount=unit, amount=unit * quantity)
    elif "amount" in params:
        item.update(_unit_amount=params["amount"] // max(quantity, 1), amount=params["amount"])
    elif item.get("_unit_amount") is not None:
        item["amount"] = item["_unit_amount"] * quantity
    item.update(quantity=quantity, quantity_decimal=str(quantity), net_amount=item["amount"])


def _sync_line(ctx: RequestContext, item: dict[str, Any], invoice: dict[str, Any]) -> None:
    """Put the item's current line on its draft invoice (replacing the previous one)."""
    price = ctx.find("price", item.get("_price") or "")
    line = new_line(ctx, invoice["id"], amount=item["amount"], currency=item["currency"], quantity=item["quantity"],
                    price=price, period=(item["period"]["start"], item["period"]["end"]),
                    description=item["description"], invoice_item=item["id"], metadata=item["metadata"],
                    discountable=item.get("discountable", True))
    line["_tax_rates"] = item.get("tax_rates") or []  # else the invoice's default_tax_rates apply
    line["_discount_rules"] = invoice_discounts.item_rules(ctx, item)  # its own discounts, before the invoice's
    invoice["_lines"] = list(invoice["_lines"])  # the saved invoice's list stays as it was saved
    old = [i for i, ln in enumerate(invoice["_lines"])
           if (ln["parent"].get("invoice_item_details") or {}).get("invoice_item") == item["id"]]
    if old:
        line["id"] = invoice["_lines"][old[0]]["id"]
        invoice["_lines"][old[0]] = line
    else:
        invoice["_lines"].append(line)
    recompute(invoice)
    ctx.save(invoice)


def add_to_invoice(ctx: RequestContext, item: dict[str, Any], invoice: dict[str, Any]) -> None:
    """Move a pending item onto a draft invoice."""
    item["invoice"] = invoice["id"]
    ctx.save(item)
    _sync_line(ctx, item, invoice)


@resource.route("POST", "/v1/invoiceitems", params={**FIELDS, "customer": Str(), "currency": Currency(),
                                                   "invoice": Str(), "subscription": Str()})
def create(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create an item for a customer: ``amount`` + ``currency``, or a price (``pricing[price]`` / ``price``)."""
    if not params.get("customer"):
        raise missing_param("customer")
    customer = ctx.get("customer", params["customer"], param="customer")
    price_id = _price_param(ctx, params)
    price = ctx.get("price", price_id, param="pricing[price]" if "pricing" in params else "price") if price_id else None
    if price is None and "amount" not in params and "unit_amount_decimal" not in params:
        raise missing_param("amount")
    if price is None and not params.get("currency"):
        raise missing_param("currency")
    invoice = ctx.get("invoice", params["invoice"], param="invoice") if params.get("invoice") else None
    if invoice is not None:
        editable_draft(invoice)
        if invoice["customer"] != customer["id"]:
            raise invalid("The invoice item's customer must be the invoice's customer.", param="invoice")
    now = ctx.now()
    item: dict[str, Any] = {
        "id": ctx.new_id("ii"), "object": "invoiceitem", "amount": 0, "currency": params.get("currency"),
        "customer": customer["id"], "customer_account": None, "date": now, "description": params.get("description"),
        "discountable": params.get("discountable", True), "discounts": [], "invoice": None, "livemode": False,
        "metadata": apply_metadata({}, params.get("metadata") or {}), "net_amount": 0, "parent": None,
        "period": params.get("period") or {"start": now, "end": now}, "pricing": None, "proration": False,
        "quantity": 1, "quantity_decimal": "1", "tax_rates": [], "test_clock": customer.get("test_clock"),
        "_price": None, "_unit_amount": None,
    }
    _set_amounts(ctx, item, params, price)
    if params.get("tax_rates"):
        item["tax_rates"] = billing_tax.rates_from(ctx, params["tax_rates"], "tax_rates")
    if params.get("discounts"):
        invoice_discounts.set_on_item(ctx, item, params["discounts"])
    if price is not None and params.get("currency") and params["currency"] != price["currency"]:
        raise invalid(f"The currency {params['currency']} does not match the price's currency {price['currency']}.",
                      param="currency")
    if invoice is not None and invoice["currency"] != item["currency"]:
        raise invalid(f"The invoice item's currency ({item['currency']}) must match the invoice's currency "
                      f"({invoice['currency']}).", param="currency")
    if item["description"] is None and price is not None:
        item["description"] = describe(ctx, price, item["quantity"], None)
    ctx.save(item)
    ctx.emit("invoiceitem.created", item)
    if invoice is not None:
        add_to_invoice(ctx, item, invoice)
    return item


@resource.route("GET", "/v1/invoiceitems/{id}")
def retrieve(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Retrieve an invoice item."""
    return ctx.get("invoiceitem", id, param="invoiceitem")


@resource.route("POST", "/v1/invoiceitems/{id}", params=FIELDS)
def update(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Update a pending item or one on a draft invoice."""
    item = ctx.get("invoiceitem", id, param="invoiceitem")
    before = ctx.get("invoiceitem", id, param="invoiceitem")
    invoice = ctx.get("invoice", item["invoice"], param="invoice") if item.get("invoice") else None
    if invoice is not None:
        editable_draft(invoice)
    price_id = _price_param(ctx, params)
    price = ctx.get("price", price_id, param="price") if price_id else None
    for key in ("description", "discountable", "period"):
        if key in params:
            item[key] = params[key]
    if "metadata" in params:
        item["metadata"] = apply_metadata(item.get("metadata"), params["metadata"])
    if "tax_rates" in params:
        item["tax_rates"] = billing_tax.rates_from(ctx, params["tax_rates"], "tax_rates")
    _set_amounts(ctx, item, params, price)
    if "discounts" in params:  # after the amounts: a promotion code's minimum is checked against the new one
        invoice_discounts.set_on_item(ctx, item, params["discounts"])
    ctx.save(item)
    ctx.emit("invoiceitem.updated", item, previous=before)
    if invoice is not None:
        _sync_line(ctx, item, invoice)
    return item


@resource.route("DELETE", "/v1/invoiceitems/{id}")
def delete(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Delete a pending item or one on a draft invoice (its line goes with it)."""
    item = ctx.get("invoiceitem", id, param="invoiceitem")
    invoice = ctx.get("invoice", item["invoice"], param="invoice") if item.get("invoice") else None
    if invoice is not None:
        editable_draft(invoice)
        invoice["_lines"] = [ln for ln in invoice["_lines"]
                             if (ln["parent"].get("invoice_item_details") or {}).get("invoice_item") != id]
        recompute(invoice)
        ctx.save(invoice)
    ctx.save({**item, "deleted": True})
    ctx.emit("invoiceitem.deleted", item)
    return deleted_stub(item)


@resource.route("GET", "/v1/invoiceitems", params={**LIST_PARAMS, "customer": Str(), "invoice": Str(),
                                                  "pending": Bool()})
def list_items(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """List items by ``customer``, ``invoice`` or ``pending`` (not yet on an invoice)."""
    def keep(item: dict[str, Any]) -> bool:
        return all(("customer" not in params or item["customer"] == params["customer"],
                    "invoice" not in params or item.get("invoice") == params["invoice"],
                    "pending" not in params or (item.get("invoice") is None) == params["pending"]))

    return ctx.list_page("invoiceitem", params, "/v1/invoiceitems", where=keep)
