"""Payment methods (cards): create, retrieve, update, list, attach, detach; magic test ids become real objects.

How payments use them (resolve a magic id, make a card, attach, the test card behind one) is ``rules/methods.py``.
"""

from __future__ import annotations

from typing import Any

from stripebench_emulator.model.context import LIST_PARAMS, RequestContext
from stripebench_emulator.model.errors import invalid, no_such
from stripebench_emulator.model.fields import ADDRESS, apply_metadata, full_address
from stripebench_emulator.model.params import Enum, Hash, Int, Metadata, Str
from stripebench_emulator.model.registry import Resource
from stripebench_emulator.rules import methods

resource = Resource("payment_method", prefix="pm", noun="PaymentMethod", expandable={"customer": "customer"})

BILLING = Hash({"address": ADDRESS, "email": Str(emptyable=True), "name": Str(emptyable=True),
                "phone": Str(emptyable=True)})
CARD = Hash({"number": Str(), "exp_month": Int(min=1, max=12), "exp_year": Int(min=0), "cvc": Str(), "token": Str()})
CREATE = {"type": Str(), "card": CARD, "billing_details": BILLING, "metadata": Metadata(), "customer": Str(),
          "payment_method": Str(), "allow_redisplay": Enum("always", "limited", "unspecified")}


@resource.route("POST", "/v1/payment_methods", params=CREATE, publishable=True)
def create(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create a card PaymentMethod from ``card[number]…`` or ``card[token]`` (also with a publishable key)."""
    if params.get("payment_method"):  # Connect-style clone: return a copy of the source card
        source = methods.resolve(ctx, params["payment_method"])
        return methods.new_method(ctx, methods.test_card(source), source.get("billing_details"), params.get("metadata"))
    if not params.get("type"):
        raise invalid("Missing required param: type.", param="type", code="parameter_missing")
    if params["type"] != "card":
        raise invalid(f"The payment method type {params['type']!r} is not supported by this emulator; use card.",
                      param="type")
    card_params = params.get("card")
    if not card_params:
        raise invalid("Missing required param: card.", param="card", code="parameter_missing")
    if card_params.get("token"):
        if not card_params["token"].startswith("tok_"):
            raise no_such("token", card_params["token"], param="card[token]")
        source = methods.resolve(ctx, card_params["token"], param="card[token]")
        pm = methods.new_method(ctx, methods.test_card(source), params.get("billing_details"), params.get("metadata"))
    else:
        for key in ("number", "exp_month", "exp_year"):
            if key not in card_params:
                raise invalid(f"Missing required param: card[{key}].", param=f"card[{key}]", code="parameter_missing")
        pm = methods.create_card(ctx, card_params["number"], card_params["exp_month"], card_params["exp_year"],
                         card_params.get("cvc"), params.get("billing_details"), params.get("metadata"))
    if params.get("allow_redisplay"):
        pm["allow_redisplay"] = params["allow_redisplay"]
        ctx.save(pm)
    if params.get("customer"):
        methods.attach(ctx, pm, params["customer"])
    return pm


@resource.route("GET", "/v1/payment_methods/{id}")
def retrieve(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Retrieve a PaymentMethod (magic ids such as pm_card_visa return a fresh object, as on Stripe)."""
    return methods.resolve(ctx, id, param="id")


@resource.route("POST", "/v1/payment_methods/{id}", params={
    "billing_details": BILLING, "metadata": Metadata(), "card": Hash({"exp_month": Int(min=1, max=12),
                                                                      "exp_year": Int(min=0)}),
    "allow_redisplay": Enum("always", "limited", "unspecified")})
def update(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Update billing details, metadata or the card's expiry."""
    pm = ctx.get("payment_method", id)
    before = ctx.get("payment_method", id)
    if "billing_details" in params:
        merged = {**pm["billing_details"], **{k: v for k, v in params["billing_details"].items() if k != "address"}}
        if "address" in params["billing_details"]:
            merged["address"] = full_address(params["billing_details"]["address"]) or methods.NO_ADDRESS
        pm["billing_details"] = merged
    if "metadata" in params:
        pm["metadata"] = apply_metadata(pm.get("metadata"), params["metadata"])
    card = {key: params["card"][key] for key in ("exp_month", "exp_year") if key in (params.get("card") or {})}
    if card:  # a new hash: the stored one is shared with the events that snapshot this PaymentMethod
        pm["card"] = {**pm["card"], **card}
    if params.get("allow_redisplay"):
        pm["allow_redisplay"] = params["allow_redisplay"]
    ctx.save(pm)
    ctx.emit("payment_method.updated", pm, previous=before)
    return pm


@resource.route("POST", "/v1/payment_methods/{id}/attach", params={"customer": Str(required=True)})
def attach_route(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Attach to a customer."""
    return methods.attach(ctx, methods.resolve(ctx, id, param="payment_method"), params["customer"])


@resource.route("POST", "/v1/payment_methods/{id}/detach")
def detach(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Detach from its customer (emits payment_method.detached)."""
    pm = ctx.get("payment_method", id)
    if not pm.get("customer"):
        raise invalid("The payment method you provided is not attached to a customer so detachment is impossible.",
                      code="payment_method_unexpected_state")
    customer = ctx.find("customer", pm["customer"])
    if customer and customer.get("invoice_settings", {}).get("default_payment_method") == id:
        customer["invoice_settings"] = {**customer["invoice_settings"], "default_payment_method": None}
        ctx.save(customer)
    pm["customer"] = None
    ctx.save(pm)
    ctx.emit("payment_method.detached", pm)
    return pm


LIST = {**LIST_PARAMS, "customer": Str(), "type": Str()}


@resource.route("GET", "/v1/payment_methods", params=LIST)
def list_payment_methods(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """List PaymentMethods, filtered by ``customer`` and ``type``."""
    customer, kind = params.get("customer"), params.get("type")
    if customer:
        ctx.get("customer", customer, param="customer")
    return ctx.list_page("payment_method", params, "/v1/payment_methods",
                         where=lambda pm: (customer is None or pm.get("customer") == customer)
                         and (kind is None or pm.get("type") == kind))


@resource.route("GET", "/v1/customers/{customer}/payment_methods", params=LIST)
def list_customer_payment_methods(ctx: RequestContext, params: dict[str, Any], customer: str) -> dict[str, Any]:
    """List a customer's PaymentMethods."""
    ctx.get("customer", customer, param="customer")
    kind = params.get("type")
    return ctx.list_page("payment_method", params, f"/v1/customers/{customer}/payment_methods",
                         where=lambda pm: pm.get("customer") == customer and (kind is None or pm.get("type") == kind))
