"""Card tokens: ``POST /v1/tokens`` (also with a publishable key, as stripe.js's createToken does) and retrieve.

A created ``tok_…`` works wherever the magic test tokens do (``card[token]``, a charge's ``source``): see
``methods.resolve``.
"""

from __future__ import annotations

from typing import Any

from stripebench_emulator.model.context import RequestContext
from stripebench_emulator.model.errors import invalid
from stripebench_emulator.model.params import Hash, Int, Str
from stripebench_emulator.model.registry import Resource
from stripebench_emulator.rules import cards

resource = Resource("token", prefix="tok", noun="token")

_BRANDS = {"visa": "Visa", "mastercard": "MasterCard", "amex": "American Express", "discover": "Discover",
           "diners": "Diners Club", "jcb": "JCB", "unionpay": "UnionPay"}
CARD = Hash({"number": Str(required=True), "exp_month": Int(min=1, max=12, required=True),
             "exp_year": Int(min=0, required=True), "cvc": Str(), "name": Str(), "address_line1": Str(),
             "address_line2": Str(), "address_city": Str(), "address_state": Str(), "address_zip": Str(),
             "address_country": Str(), "currency": Str()})


@resource.route("POST", "/v1/tokens", params={"card": CARD, "customer": Str()}, publishable=True)
def create(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Tokenize card details."""
    if not params.get("card"):
        raise invalid("You must supply either a card, customer, PII data, bank account, or account legal entity to "
                      "create a token.", param="card")
    c = params["card"]
    card = cards.card_for_number(c["number"], c["exp_month"], c["exp_year"])
    if card is None:
        raise cards.incorrect_number_error()
    details = card.card_hash()
    token = {
        "id": ctx.new_id("tok"), "object": "token", "client_ip": "127.0.0.1", "created": ctx.now(), "livemode": False,
        "type": "card", "used": False,
        "card": {"id": ctx.new_id("card"), "object": "card", "address_city": c.get("address_city"),
                 "address_country": c.get("address_country"), "address_line1": c.get("address_line1"),
                 "address_line2": c.get("address_line2"), "address_state": c.get("address_state"),
                 "address_zip": c.get("address_zip"), "brand": _BRANDS.get(card.brand, "Unknown"),
                 "country": card.country, "cvc_check": "unchecked" if c.get("cvc") else None,
                 "exp_month": card.exp_month, "exp_year": card.exp_year, "fingerprint": details["fingerprint"],
                 "funding": card.funding, "last4": card.last4, "metadata": {}, "name": c.get("name"),
                 "tokenization_method": None},
        "_number": card.number,
    }
    ctx.save(token)
    return token


@resource.route("GET", "/v1/tokens/{id}")
def retrieve(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Retrieve a token."""
    return ctx.get("token", id)
