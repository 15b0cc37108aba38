"""Products: create (optionally with ``default_price_data``), retrieve, update, delete, list."""

from __future__ import annotations

from typing import Any

from stripebench_emulator.model.context import LIST_PARAMS, RequestContext
from stripebench_emulator.model.errors import StripeError, invalid
from stripebench_emulator.model.fields import apply_fields, apply_metadata, deleted_stub
from stripebench_emulator.model.params import AnyHash, Array, Bool, Currency, Hash, Int, Metadata, Num, Param, Str
from stripebench_emulator.model.registry import Resource
from stripebench_emulator.model.search import SEARCH_PARAMS, search_page
from stripebench_emulator.rules.catalog import PLAIN, new_price, new_product

resource = Resource("product", prefix="prod", noun="product", expandable={"default_price": "price"})

DIMENSIONS = Hash({k: Num(required=True) for k in ("height", "length", "weight", "width")}, emptyable=True)
EDITABLE: dict[str, Param] = {
    "active": Bool(),
    "description": Str(emptyable=True, max_length=40000),
    "images": Array(Str(), emptyable=True, max_items=8),
    "marketing_features": Array(Hash({"name": Str(required=True)}), emptyable=True, max_items=15),
    "metadata": Metadata(),
    "name": Str(max_length=250),
    "package_dimensions": DIMENSIONS,
    "shippable": Bool(),
    "statement_descriptor": Str(emptyable=True, max_length=22),
    "tax_code": Str(emptyable=True),
    "unit_label": Str(emptyable=True, max_length=12),
    "url": Str(emptyable=True),
}
DEFAULT_PRICE_DATA = Hash({
    "currency": Currency(required=True),
    "unit_amount": Int(min=0),
    "unit_amount_decimal": Num(min=0, as_string=True),
    "recurring": Hash({"interval": Str(required=True), "interval_count": Int(min=1)}),
    "tax_behavior": Str(),
    "currency_options": AnyHash(Hash({"unit_amount": Int(min=0), "unit_amount_decimal": Num(min=0, as_string=True),
                                      "tax_behavior": Str()})),
    "metadata": Metadata(),
})


@resource.route("POST", "/v1/products", params={**EDITABLE, "name": Str(required=True, max_length=250), "id": Str(),
                                                "default_price_data": DEFAULT_PRICE_DATA})
def create(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create a product; ``default_price_data`` also creates its default price."""
    obj = new_product(ctx, params)
    if params.get("default_price_data"):
        price = new_price(ctx, {**params["default_price_data"], "product": obj["id"]}, param="default_price_data")
        before = dict(obj)
        obj["default_price"] = price["id"]
        ctx.save(obj)
        ctx.emit("product.updated", obj, previous=before)
    return obj


@resource.route("GET", "/v1/products/search", params=SEARCH_PARAMS)
def search(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Search products (``name``, ``active``, ``description``, ``url``, ``created``, ``metadata['k']``)."""
    return search_page(ctx, "product", params, "/v1/products/search", {"name", "active", "description", "url",
                                                                        "created", "shippable"})


@resource.route("GET", "/v1/products/{id}")
def retrieve(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Retrieve a product."""
    return ctx.get("product", id)


@resource.route("POST", "/v1/products/{id}", params={**EDITABLE, "default_price": Str(emptyable=True)})
def update(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Update a product; ``default_price`` must be an active price of this product."""
    obj = ctx.get("product", id)
    before = ctx.get("product", id)
    apply_fields(obj, params, PLAIN)
    if "marketing_features" in params:
        obj["marketing_features"] = params["marketing_features"] or []
    if "images" in params:
        obj["images"] = params["images"] or []
    if "metadata" in params:
        obj["metadata"] = apply_metadata(obj["metadata"], params["metadata"])
    if "default_price" in params:
        price_id = params["default_price"]
        if price_id is not None:
            price = ctx.get("price", price_id, param="default_price")
            if price["product"] != obj["id"]:
                raise invalid(f"The price `{price_id}` does not belong to product `{obj['id']}`.", param="default_price")
            if not price["active"]:
                raise invalid(f"The price `{price_id}` is not active.", param="default_price")
        obj["default_price"] = price_id
    obj["updated"] = ctx.now()
    ctx.save(obj)
    ctx.emit("product.updated", obj, previous=before)
    return obj


@resource.route("DELETE", "/v1/products/{id}")
def delete(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Delete a product that has no prices (Stripe refuses otherwise)."""
    obj = ctx.get("product", id)
    if any(p["product"] == id for p in ctx.store.scan("price")):
        raise StripeError("This product cannot be deleted because it has one or more user-created prices.",
                          param="id")
    ctx.remove("product", id)
    ctx.emit("product.deleted", obj)
    return deleted_stub(obj)


@resource.route("GET", "/v1/products", params={**LIST_PARAMS, "active": Bool(), "ids": Array(Str()),
                                               "shippable": Bool(), "url": Str()})
def list_products(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """List products with ``active``, ``ids``, ``shippable``, ``url`` filters."""
    def keep(p: dict[str, Any]) -> bool:
        return all((
            "active" not in params or p["active"] == params["active"],
            "ids" not in params or p["id"] in params["ids"],
            "shippable" not in params or p["shippable"] == params["shippable"],
            "url" not in params or p["url"] == params["url"],
        ))

    return ctx.list_page("product", params, "/v1/products", where=keep)
