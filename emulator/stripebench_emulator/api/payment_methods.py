"""Payment methods (cards): create, retrieve, update, list, attach, detach; magic test ids become real objects.

Internal API (used by payment/setup intents and the Checkout pages):

* ``resolve(ctx, pm_id, param="payment_method") -> pm`` — a stored PaymentMethod, or a magic id
  (``pm_card_visa``, ``tok_visa``, …) materialised as a new ``pm_…`` on first use; 404 otherwise.
* ``create_card(ctx, number, exp_month, exp_year, cvc=None, billing_details=None) -> pm`` — what the
  payment form does; raises the 402 ``incorrect_number`` card_error for numbers failing the checksum.
* ``attach(ctx, pm, customer_id) -> pm`` — attach and emit ``payment_method.attached`` (declining cards fail
  with their card_error, like Stripe's attach-time check).
* ``test_card(pm) -> cards.TestCard`` — the outcome the PaymentMethod's card will have when charged.
"""

from __future__ import annotations

from typing import Any

from stripebench_emulator.model.context import LIST_PARAMS, RequestContext
from stripebench_emulator.model.errors import StripeError, invalid, no_such
from stripebench_emulator.model.params import Enum, Hash, Int, Metadata, Str
from stripebench_emulator.model.registry import Resource
from stripebench_emulator.api import cards
from stripebench_emulator.model.fields import ADDRESS, apply_metadata, full_address

resource = Resource("payment_method", prefix="pm", noun="PaymentMethod", expandable={"customer": "customer"})

BILLING = Hash({"address": ADDRESS, "email": Str(emptyable=True), "name": Str(emptyable=True),
                "phone": Str(emptyable=True)})
CARD = Hash({"number": Str(), "exp_month": Int(min=1, max=12), "exp_year": Int(min=0), "cvc": Str(), "token": Str()})
CREATE = {"type": Str(), "card": CARD, "billing_details": BILLING, "metadata": Metadata(), "customer": Str(),
          "payment_method": Str(), "allow_redisplay": Enum("always", "limited", "unspecified")}


def _billing(value: dict[str, Any] | None) -> dict[str, Any]:
    value = value or {}
    return {"address": full_address(value.get("address")) or _NO_ADDRESS, "email": value.get("email"),
            "name": value.get("name"), "phone": value.get("phone"), "tax_id": None}


_NO_ADDRESS = full_address({})  # shared by every PaymentMethod made without one (read only, as stored values are)


def _new(ctx: RequestContext, card: cards.TestCard, billing: dict[str, Any] | None = None,
         metadata: dict[str, Any] | None = None, magic: str | None = None) -> dict[str, Any]:
    pm = {
        "id": ctx.new_id("pm"), "object": "payment_method", "allow_redisplay": "unspecified",
        "billing_details": _billing(billing), "card": card.card_hash(), "created": ctx.now(), "customer": None,
        "livemode": False, "metadata": apply_metadata({}, metadata or {}), "type": "card",
        "_number": card.number, "_magic": magic,
    }
    ctx.save(pm)
    return pm


def create_card(ctx: RequestContext, number: str, exp_month: int, exp_year: int, cvc: str | None = None,
                billing_details: dict[str, Any] | None = None, metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """A card PaymentMethod from typed details; 402 ``incorrect_number`` if the number fails the checksum."""
    card = cards.card_for_number(number, exp_month, exp_year)
    if card is None:
        raise cards.incorrect_number_error()
    return _new(ctx, card, billing_details, metadata)


def resolve(ctx: RequestContext, pm_id: str, param: str = "payment_method") -> dict[str, Any]:
    """A stored PaymentMethod, or a magic test id materialised as a new one; Stripe's 404 otherwise."""
    found = ctx.find("payment_method", pm_id)
    if found is not None:
        return found
    if pm_id.startswith("card_"):  # a legacy card on a customer (``/v1/customers/{id}/sources``)
        from stripebench_emulator.api.sources import card_as_payment_method

        card = ctx.find("card", pm_id)
        if card is not None and not card.get("deleted"):
            return card_as_payment_method(card)
    card = cards.card_for_magic_id(pm_id)
    if card is None and pm_id.startswith("tok_"):  # a token made by POST /v1/tokens
        token = ctx.find("token", pm_id)
        card = cards.card_for_number(token["_number"], token["card"]["exp_month"],
                                     token["card"]["exp_year"]) if token else None
    if card is None:
        raise no_such("PaymentMethod", pm_id, param=param)
    return _new(ctx, card, magic=pm_id)


def test_card(pm: dict[str, Any]) -> cards.TestCard:
    """The test-card behaviour of a stored PaymentMethod."""
    card = cards.card_for_number(pm.get("_number") or "4242424242424242")
    return card or cards.BY_NUMBER["4242424242424242"]


def attach(ctx: RequestContext, pm: dict[str, Any], customer_id: str, param: str = "customer") -> dict[str, Any]:
    """Attach ``pm`` to a customer (emits payment_method.attached); attach-time declines raise the card_error."""
    ctx.get("customer", customer_id, param=param)
    if pm.get("customer") == customer_id:
        return pm
    if pm.get("customer"):
        raise StripeError("The payment method you provided has already been attached to a customer.",
                          param="payment_method", code="resource_already_exists")
    card = test_card(pm)
    if card.attach_fails:
        raise card.decline_error()
    pm["customer"] = customer_id
    ctx.save(pm)
    ctx.emit("payment_method.attached", pm)
    return pm


@resource.route("POST", "/v1/payment_methods", params=CREATE, publishable=True)
def create(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create a card PaymentMethod from ``card[number]…`` or ``card[token]`` (also with a publishable key)."""
    if params.get("payment_method"):  # Connect-style clone: return a copy of the source card
        source = resolve(ctx, params["payment_method"])
        return _new(ctx, test_card(source), source.get("billing_details"), params.get("metadata"))
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
        source = resolve(ctx, card_params["token"], param="card[token]")
        pm = _new(ctx, test_card(source), params.get("billing_details"), params.get("metadata"))
    else:
        for key in ("number", "exp_month", "exp_year"):
            if key not in card_params:
                raise invalid(f"Missing required param: card[{key}].", param=f"card[{key}]", code="parameter_missing")
        pm = create_card(ctx, card_params["number"], card_params["exp_month"], card_params["exp_year"],
                         card_params.get("cvc"), params.get("billing_details"), params.get("metadata"))
    if params.get("allow_redisplay"):
        pm["allow_redisplay"] = params["allow_redisplay"]
        ctx.save(pm)
    if params.get("customer"):
        attach(ctx, pm, params["customer"])
    return pm


@resource.route("GET", "/v1/payment_methods/{id}")
def retrieve(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Retrieve a PaymentMethod (magic ids such as pm_card_visa return a fresh object, as on Stripe)."""
    return resolve(ctx, id, param="id")


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
            merged["address"] = full_address(params["billing_details"]["address"]) or _NO_ADDRESS
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
    return attach(ctx, resolve(ctx, id, param="payment_method"), params["customer"])


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
