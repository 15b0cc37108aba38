"""Making catalog objects: products and prices, as their own endpoints, ``product_data`` / ``price_data`` /
``default_price_data`` and plans make them, with lookup keys claimed across prices."""

from __future__ import annotations

from typing import Any

from stripebench_emulator.model.context import RequestContext
from stripebench_emulator.model.errors import invalid, missing_param
from stripebench_emulator.model.fields import apply_fields, apply_metadata

PLAIN = ("active", "description", "images", "name", "package_dimensions", "shippable", "statement_descriptor",
         "tax_code", "unit_label", "url")


def new_product(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create and save a product from cleaned params (also used by ``price[product_data]``); emits product.created."""
    if not params.get("name"):
        raise invalid("Missing required param: name.", param="name", code="parameter_missing")
    product_id = params.get("id") or ctx.new_id("prod")
    if ctx.find("product", product_id) is not None:
        raise invalid("Product already exists.", param="id", code="resource_already_exists")
    now = ctx.now()
    obj: dict[str, Any] = {
        "id": product_id, "object": "product", "active": True, "created": now, "default_price": None,
        "description": None, "images": [], "livemode": False, "marketing_features": [], "metadata": {},
        "name": None, "package_dimensions": None, "shippable": None, "statement_descriptor": None, "tax_code": None,
        "type": "service", "unit_label": None, "updated": now, "url": None,
    }
    apply_fields(obj, params, PLAIN)
    obj["images"] = obj["images"] or []
    obj["marketing_features"] = params.get("marketing_features") or []
    obj["metadata"] = apply_metadata({}, params.get("metadata") or {})
    ctx.save(obj)
    ctx.emit("product.created", obj)
    return obj


def _amounts(values: dict[str, Any], prefix: str) -> tuple[int | None, str | None]:
    if "unit_amount" in values and "unit_amount_decimal" in values:
        raise invalid(f"You may only specify one of these parameters: {prefix}unit_amount, {prefix}unit_amount_decimal.",
                      param=f"{prefix}unit_amount")
    if "unit_amount" in values:
        return values["unit_amount"], str(values["unit_amount"])
    if "unit_amount_decimal" in values:
        decimal = values["unit_amount_decimal"]
        return (int(float(decimal)) if float(decimal).is_integer() else None), decimal
    return None, None


def currency_options(raw: dict[str, Any], param: str) -> dict[str, Any]:
    options = {}
    for currency, option in raw.items():
        if len(currency) != 3 or not currency.isalpha():
            raise invalid(f"Invalid currency: {currency}", param=f"{param}[{currency}]")
        amount, decimal = _amounts(option, f"{param}[{currency}][")
        options[currency.lower()] = {"custom_unit_amount": option.get("custom_unit_amount"),
                                     "tax_behavior": option.get("tax_behavior", "unspecified"),
                                     "unit_amount": amount, "unit_amount_decimal": decimal}
    return options


def claim_lookup_key(ctx: RequestContext, key: str | None, transfer: bool, own_id: str | None) -> None:
    if not key:
        return
    for stored in ctx.store.scan("price"):
        if stored["lookup_key"] == key and stored["id"] != own_id:
            other = ctx.get("price", stored["id"])
            if not transfer:
                raise invalid(f"A price (`{other['id']}`) already uses that lookup key.", param="lookup_key")
            before = dict(other)
            other["lookup_key"] = None
            ctx.save(other)
            ctx.emit("price.updated", other, previous=before)


def new_price(ctx: RequestContext, params: dict[str, Any], param: str = "") -> dict[str, Any]:
    """Create and save a price from cleaned params (also used by products and, later, ``price_data``)."""
    prefix = f"{param}[" if param else ""
    if "product" in params and "product_data" in params:
        raise invalid("You may only specify one of these parameters: product, product_data.", param="product")
    if "product" in params:
        product_id = ctx.get("product", params["product"], param=f"{param}[product]" if param else "product")["id"]
    elif "product_data" in params:
        product_id = new_product(ctx, params["product_data"])["id"]
    else:
        raise missing_param("product")
    amount, decimal = _amounts(params, prefix)
    if decimal is None and not params.get("custom_unit_amount"):
        raise missing_param(f"{param}[unit_amount]" if param else "unit_amount")
    recurring = params.get("recurring")
    currency = params["currency"]
    tax_behavior = params.get("tax_behavior", "unspecified")
    obj: dict[str, Any] = {
        # ``_id``: the id a plan created through /v1/plans chose for itself and its price
        "id": params.get("_id") or ctx.new_id("price"), "object": "price", "active": params.get("active", True),
        "billing_scheme": "per_unit", "created": ctx.now(), "currency": currency,
        "custom_unit_amount": params.get("custom_unit_amount"), "livemode": False,
        "lookup_key": params.get("lookup_key"), "metadata": apply_metadata({}, params.get("metadata") or {}),
        "nickname": params.get("nickname"), "product": product_id,
        "recurring": None if recurring is None else {
            "interval": recurring["interval"], "interval_count": recurring.get("interval_count", 1),
            "meter": recurring.get("meter"), "trial_period_days": recurring.get("trial_period_days"),
            "usage_type": recurring.get("usage_type", "licensed")},
        "tax_behavior": tax_behavior, "tiers_mode": None,
        "transform_quantity": _transform(params.get("transform_quantity")),
        "type": "recurring" if recurring else "one_time", "unit_amount": amount, "unit_amount_decimal": decimal,
        "_currency_options": {currency: {"custom_unit_amount": params.get("custom_unit_amount"),
                                         "tax_behavior": tax_behavior, "unit_amount": amount,
                                         "unit_amount_decimal": decimal}},
    }
    obj["_currency_options"].update(currency_options(params.get("currency_options") or {}, f"{prefix}currency_options"))
    claim_lookup_key(ctx, obj["lookup_key"], params.get("transfer_lookup_key", False), obj["id"])
    ctx.save(obj)
    ctx.emit("price.created", obj)
    return obj


def _transform(given: dict[str, Any] | None) -> dict[str, Any] | None:
    """A price's ``transform_quantity`` as Stripe renders it."""
    return None if not given else {"divide_by": given["divide_by"], "round": given["round"]}
