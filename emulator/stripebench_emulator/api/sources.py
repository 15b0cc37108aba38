"""Customer sources (the legacy Cards API): ``/v1/customers/{id}/sources`` add, list, retrieve, update, delete.

``source=tok_visa`` (or a ``tok_`` from ``POST /v1/tokens``) becomes a ``card_…`` on the customer; the first one
becomes ``default_source``. Charges accept the card id as ``source`` (``methods.resolve`` sees it as a
card PaymentMethod, through ``methods.card_as_payment_method``).
"""

from __future__ import annotations

from typing import Any

from stripebench_emulator.model.context import LIST_PARAMS, RequestContext
from stripebench_emulator.model.errors import StripeError, missing_param, no_such
from stripebench_emulator.model.fields import apply_metadata, deleted_stub
from stripebench_emulator.model.params import Enum, Int, Metadata, Str
from stripebench_emulator.model.registry import Resource
from stripebench_emulator.rules import cards

resource = Resource("card", prefix="card", noun="source", expandable={"customer": "customer"})

_BRANDS = {"visa": "Visa", "mastercard": "MasterCard", "amex": "American Express", "discover": "Discover",
           "diners": "Diners Club", "jcb": "JCB", "unionpay": "UnionPay"}
_ADDRESS = ("address_city", "address_country", "address_line1", "address_line2", "address_state", "address_zip")
UPDATE = {**{k: Str(emptyable=True) for k in _ADDRESS}, "exp_month": Int(min=1, max=12), "exp_year": Int(min=0),
          "name": Str(emptyable=True), "metadata": Metadata()}


def _test_card_for(ctx: RequestContext, source: str) -> tuple[cards.TestCard, dict[str, Any] | None]:
    """The test card a ``tok_`` stands for, and the stored token (None for magic ones such as ``tok_visa``)."""
    if source.startswith("tok_"):
        token = ctx.find("token", source)
        if token is not None:
            if token["used"]:
                raise StripeError(f"You cannot use a Stripe token more than once: {source}.", param="source",
                                  code="token_already_used")
            card = cards.card_for_number(token["_number"], token["card"]["exp_month"], token["card"]["exp_year"])
            if card is not None:
                return card, token
        card = cards.card_for_magic_id(source)
        if card is not None:
            return card, None
    raise no_such("source", source, param="source")


def add_card(ctx: RequestContext, owner: dict[str, Any], source: str, metadata: dict[str, Any] | None = None,
             param: str = "source") -> dict[str, Any]:
    """Save a card made from token ``source`` for ``owner`` (the caller sets ``default_source`` and emits
    ``customer.source.created``); a declining test card fails here, as Stripe checks a card when it is added."""
    test, token = _test_card_for(ctx, source)
    if test.attach_fails:
        raise test.decline_error()
    details = token["card"] if token else {}
    hashed = test.card_hash()
    card = {
        "id": ctx.new_id("card"), "object": "card", **{k: details.get(k) for k in _ADDRESS},
        "address_line1_check": None, "address_zip_check": None, "brand": _BRANDS.get(test.brand, "Unknown"),
        "country": test.country, "customer": owner["id"], "cvc_check": "pass", "dynamic_last4": None,
        "exp_month": test.exp_month, "exp_year": test.exp_year, "fingerprint": hashed["fingerprint"],
        "funding": test.funding, "last4": test.last4, "metadata": apply_metadata({}, metadata or {}),
        "name": details.get("name"), "regulated_status": "unregulated", "tokenization_method": None,
        "_number": test.number,
    }
    ctx.save(card)
    if token is not None:
        token["used"] = True
        ctx.save(token)
    return card


def remove_card(ctx: RequestContext, card: dict[str, Any]) -> None:
    """Delete a stored card (``customer.source.deleted``); the caller fixes the owner's ``default_source``."""
    ctx.save({**card, "deleted": True})
    ctx.emit("customer.source.deleted", card)


@resource.route("POST", "/v1/customers/{customer}/sources", params={"source": Str(), "metadata": Metadata(),
                                                                   "validate": Str()})
def create(ctx: RequestContext, params: dict[str, Any], customer: str) -> dict[str, Any]:
    """Add a card from a token; the customer's first card becomes its ``default_source``."""
    owner = ctx.get("customer", customer, param="customer")
    if not params.get("source"):
        raise missing_param("source")
    card = add_card(ctx, owner, params["source"], params.get("metadata"))
    ctx.emit("customer.source.created", card)
    if not owner.get("default_source"):
        before = dict(owner)
        owner["default_source"] = card["id"]
        ctx.save(owner)
        ctx.emit("customer.updated", owner, previous=before)
    return card


def _owned(ctx: RequestContext, customer: str, card_id: str) -> dict[str, Any]:
    ctx.get("customer", customer, param="customer")
    card = ctx.find("card", card_id)
    if card is None or card.get("deleted") or card.get("customer") != customer:
        raise no_such("source", card_id, param="id")
    return card


@resource.route("GET", "/v1/customers/{customer}/sources", params={**LIST_PARAMS, "object": Enum(
    "card", "bank_account", "source")})
def list_sources(ctx: RequestContext, params: dict[str, Any], customer: str) -> dict[str, Any]:
    """A customer's cards (``object=card`` or nothing; bank accounts and Sources are not modelled)."""
    ctx.get("customer", customer, param="customer")
    wanted = params.get("object", "card")
    return ctx.list_page("card", {k: v for k, v in params.items() if k != "object"},
                         f"/v1/customers/{customer}/sources",
                         where=lambda c: wanted == "card" and c.get("customer") == customer)


@resource.route("GET", "/v1/customers/{customer}/sources/{id}")
def retrieve(ctx: RequestContext, params: dict[str, Any], customer: str, id: str) -> dict[str, Any]:
    """Retrieve one of the customer's cards."""
    return _owned(ctx, customer, id)


@resource.route("POST", "/v1/customers/{customer}/sources/{id}", params=UPDATE)
def update(ctx: RequestContext, params: dict[str, Any], customer: str, id: str) -> dict[str, Any]:
    """Update a card's holder name, address, expiry or metadata."""
    card = _owned(ctx, customer, id)
    before = dict(card)
    for key in (*_ADDRESS, "exp_month", "exp_year", "name"):
        if key in params:
            card[key] = params[key]
    if "metadata" in params:
        card["metadata"] = apply_metadata(card.get("metadata"), params["metadata"])
    ctx.save(card)
    ctx.emit("customer.source.updated", card, previous=before)
    return card


@resource.route("DELETE", "/v1/customers/{customer}/sources/{id}")
def delete(ctx: RequestContext, params: dict[str, Any], customer: str, id: str) -> dict[str, Any]:
    """Remove a card; the customer's next card (newest first) becomes the default, if any."""
    card = _owned(ctx, customer, id)
    remove_card(ctx, card)
    owner = ctx.get("customer", customer, param="customer")
    if owner.get("default_source") == id:
        before = dict(owner)
        rest = [c for c in ctx.store.scan("card") if c.get("customer") == customer and not c.get("deleted")]
        owner["default_source"] = rest[0]["id"] if rest else None
        ctx.save(owner)
        ctx.emit("customer.updated", owner, previous=before)
    return {**deleted_stub(card), "customer": customer}
