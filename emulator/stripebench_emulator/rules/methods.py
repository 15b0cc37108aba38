"""PaymentMethods as payments use them (payment and setup intents, customers, the Checkout pages).

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

from stripebench_emulator.model.context import RequestContext
from stripebench_emulator.model.errors import StripeError, no_such
from stripebench_emulator.model.fields import apply_metadata, full_address
from stripebench_emulator.rules import cards


def billing_details(value: dict[str, Any] | None) -> dict[str, Any]:
    value = value or {}
    return {"address": full_address(value.get("address")) or NO_ADDRESS, "email": value.get("email"),
            "name": value.get("name"), "phone": value.get("phone"), "tax_id": None}


NO_ADDRESS = full_address({})  # shared by every PaymentMethod made without one (read only, as stored values are)


def new_method(ctx: RequestContext, card: cards.TestCard, billing: dict[str, Any] | None = None,
         metadata: dict[str, Any] | None = None, magic: str | None = None) -> dict[str, Any]:
    pm = {
        "id": ctx.new_id("pm"), "object": "payment_method", "allow_redisplay": "unspecified",
        "billing_details": billing_details(billing), "card": card.card_hash(), "created": ctx.now(), "customer": None,
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
    return new_method(ctx, card, billing_details, metadata)


def resolve(ctx: RequestContext, pm_id: str, param: str = "payment_method") -> dict[str, Any]:
    """A stored PaymentMethod, or a magic test id materialised as a new one; Stripe's 404 otherwise."""
    found = ctx.find("payment_method", pm_id)
    if found is not None:
        return found
    if pm_id.startswith("card_"):  # a legacy card on a customer (``/v1/customers/{id}/sources``)

        legacy = ctx.find("card", pm_id)
        if legacy is not None and not legacy.get("deleted"):
            return card_as_payment_method(legacy)
    card = cards.card_for_magic_id(pm_id)
    if card is None and pm_id.startswith("tok_"):  # a token made by POST /v1/tokens
        token = ctx.find("token", pm_id)
        card = cards.card_for_number(token["_number"], token["card"]["exp_month"],
                                     token["card"]["exp_year"]) if token else None
    if card is None:
        raise no_such("PaymentMethod", pm_id, param=param)
    return new_method(ctx, card, magic=pm_id)


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


def card_as_payment_method(card: dict[str, Any]) -> dict[str, Any]:
    """A stored card seen as a card PaymentMethod (what charges and payment intents work with)."""
    test = cards.card_for_number(card["_number"]) or cards.BY_NUMBER["4242424242424242"]
    return {"id": card["id"], "object": "payment_method", "type": "card", "customer": card.get("customer"),
            "billing_details": {"address": {"city": card["address_city"], "country": card["address_country"],
                                            "line1": card["address_line1"], "line2": card["address_line2"],
                                            "postal_code": card["address_zip"], "state": card["address_state"]},
                                "email": None, "name": card["name"], "phone": None, "tax_id": None},
            "card": test.card_hash(), "metadata": card.get("metadata", {}), "_number": card["_number"],
            "_is_card": True}
