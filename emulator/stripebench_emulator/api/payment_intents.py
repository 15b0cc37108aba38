"""Payment intents: create, retrieve, update, confirm, capture, cancel, list, search; test-card outcomes.

Statuses: requires_payment_method → requires_confirmation → (requires_action for 3-D Secure cards) →
succeeded / requires_capture (``capture_method=manual``) / canceled. A decline keeps the failed charge and the
PI (back in requires_payment_method with ``last_payment_error``) and answers 402 ``card_error``.

The PaymentIntent's life (confirm, authenticate, capture, cancel) is ``rules/intents.py``; here are its routes and
parameters, and ``check_client_secret(ctx, obj, secret)``, what publishable-key (stripe.js) requests must pass.

Publishable keys (``pk_test_…``) may retrieve and confirm a PI when they send its ``client_secret``, as on Stripe.
"""

from __future__ import annotations

from typing import Any

from stripebench_emulator.api import payment_methods
from stripebench_emulator.model import versions
from stripebench_emulator.model.context import LIST_PARAMS, RequestContext
from stripebench_emulator.model.errors import StripeError, invalid
from stripebench_emulator.model.fields import SHIPPING, apply_metadata
from stripebench_emulator.model.params import Array, Bool, Currency, Enum, Hash, Int, Metadata, Param, Str
from stripebench_emulator.model.registry import Resource
from stripebench_emulator.model.search import SEARCH_PARAMS, search_page
from stripebench_emulator.rules import charging, intents

resource = Resource("payment_intent", prefix="pi", noun="payment_intent",
                    expandable={"customer": "customer", "latest_charge": "charge", "payment_method": "payment_method",
                                "last_payment_error.payment_method": "payment_method", "invoice": "invoice"},
                    shallow_render=True)


class Loose(Param):
    """Any value (for option hashes the emulator accepts but does not act on)."""


PM_DATA = Hash({"type": Str(required=True), "card": payment_methods.CARD, "billing_details": payment_methods.BILLING,
                "metadata": Metadata(), "allow_redisplay": Str()})
CONFIRM_FIELDS: dict[str, Param] = {
    "payment_method": Str(), "payment_method_data": PM_DATA, "payment_method_options": Loose(),
    "payment_method_types": Array(Str()), "return_url": Str(), "off_session": Str(), "receipt_email": Str(emptyable=True),
    "setup_future_usage": Enum("on_session", "off_session", emptyable=True), "shipping": SHIPPING,
    "error_on_requires_action": Bool(), "mandate_data": Loose(), "use_stripe_sdk": Bool(), "capture_method": Enum(
        "automatic", "automatic_async", "manual"), "client_secret": Str(), "expected_payment_method_type": Str(),
    "radar_options": Loose(), "confirmation_token": Str(),
}
UPDATE_FIELDS: dict[str, Param] = {
    "amount": Int(min=0), "currency": Currency(), "customer": Str(), "description": Str(emptyable=True),
    "metadata": Metadata(), "payment_method": Str(), "payment_method_types": Array(Str()),
    "payment_method_options": Loose(), "payment_method_data": PM_DATA, "receipt_email": Str(emptyable=True),
    "setup_future_usage": Enum("on_session", "off_session", emptyable=True), "shipping": SHIPPING,
    "statement_descriptor": Str(emptyable=True, max_length=22),
    "statement_descriptor_suffix": Str(emptyable=True, max_length=22), "transfer_group": Str(),
    "capture_method": Enum("automatic", "automatic_async", "manual"), "application_fee_amount": Int(min=0),
}
CREATE_FIELDS: dict[str, Param] = {
    **UPDATE_FIELDS, **CONFIRM_FIELDS, "amount": Int(min=0, required=True), "currency": Currency(required=True),
    "confirm": Bool(), "confirmation_method": Enum("automatic", "manual"),
    "automatic_payment_methods": Hash({"enabled": Bool(required=True),
                                       "allow_redirects": Enum("always", "never")}),
    "on_behalf_of": Str(), "transfer_data": Loose(), "payment_method_configuration": Str(),
}
del CREATE_FIELDS["client_secret"]


def check_client_secret(ctx: RequestContext, obj: dict[str, Any], secret: str | None) -> None:
    """Publishable-key requests must carry the object's client_secret (secret keys need not)."""
    if ctx.publishable and secret != obj["client_secret"]:
        noun = "PaymentIntent" if obj["object"] == "payment_intent" else "SetupIntent"
        raise invalid(f"The client_secret provided does not match any associated {noun} on this account.",
                      param="client_secret")


@resource.renderer
def render_pi(obj: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
    if obj.get("capture_method") is None:
        obj["capture_method"] = "automatic_async" if ctx.version_at_least("2024-06-20") else "automatic"
    if obj.get("_apm_default") and ctx.version_at_least("2023-08-16"):
        obj["automatic_payment_methods"] = {"allow_redirects": "always", "enabled": True}
    if not ctx.version_at_least(versions.PAYMENT_INTENT_LATEST_CHARGE):
        data = [ctx.render(c) for c in charging.for_payment_intent(ctx, obj["id"])]
        obj["charges"] = {"object": "list", "data": data, "has_more": False, "total_count": len(data),
                          "url": f"/v1/charges?payment_intent={obj['id']}"}
        obj.pop("latest_charge", None)
    if not ctx.version_at_least(versions.PAYMENT_INTENT_INVOICE_REMOVED):  # the invoice it pays, before basil
        obj["invoice"] = obj.get("_invoice")
    if ctx.publishable:  # stripe.js sees a subset; the customer and metadata stay private
        for key in ("customer", "metadata", "application_fee_amount", "transfer_data", "transfer_group",
                    "on_behalf_of", "review", "statement_descriptor", "statement_descriptor_suffix"):
            obj.pop(key, None)
    return obj


@resource.route("POST", "/v1/payment_intents", params=CREATE_FIELDS)
def create(ctx: RequestContext, params: dict[str, Any]) -> Any:
    """Create a PaymentIntent (``confirm=true`` confirms it in the same request)."""
    if params.get("automatic_payment_methods") and params.get("payment_method_types"):
        raise invalid("You may only specify one of these parameters: automatic_payment_methods, "
                      "payment_method_types.", param="automatic_payment_methods")
    confirm_params: dict[str, Any] = {k: params.pop(k) for k in ("off_session", "return_url", "error_on_requires_action",
                                                  "mandate_data", "use_stripe_sdk", "confirm", "radar_options",
                                                  "confirmation_token") if k in params}
    if confirm_params.get("off_session") and not confirm_params.get("confirm"):
        raise invalid("off_session can only be used when confirm=true.", param="off_session")
    pi = intents.new_intent(ctx, params)
    if confirm_params.get("confirm"):
        pi, error = intents.confirm_intent(ctx, pi, confirm_params)
        return error or pi
    return pi


@resource.route("GET", "/v1/payment_intents/search", params=SEARCH_PARAMS)
def search(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Search (``status``, ``amount``, ``currency``, ``customer``, ``created``, ``metadata['k']``)."""
    return search_page(ctx, "payment_intent", params, "/v1/payment_intents/search",
                       {"status", "amount", "currency", "customer", "created"})


@resource.route("GET", "/v1/payment_intents/{id}", params={"client_secret": Str()}, publishable=True)
def retrieve(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Retrieve a PaymentIntent (with a publishable key, ``client_secret`` is required)."""
    pi = ctx.peek("payment_intent", id)
    check_client_secret(ctx, pi, params.get("client_secret"))
    return pi


@resource.route("POST", "/v1/payment_intents/{id}", params=UPDATE_FIELDS)
def update(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Update a PaymentIntent that is not yet paid."""
    pi = ctx.get("payment_intent", id)
    if pi["status"] in ("succeeded", "canceled", "processing", "requires_capture") and set(params) - {
            "metadata", "description", "receipt_email", "shipping"}:
        raise intents.unexpected_state(pi, "update", "updated: requires_payment_method, requires_confirmation, requires_action")
    intents.apply_params(ctx, pi, params)
    if params.get("payment_method") or params.get("payment_method_data"):
        pi["status"] = "requires_confirmation"
    ctx.save(pi)  # Stripe has no payment_intent.updated event
    return pi


@resource.route("POST", "/v1/payment_intents/{id}/confirm", params=CONFIRM_FIELDS, publishable=True)
def confirm(ctx: RequestContext, params: dict[str, Any], id: str) -> Any:
    """Confirm: charge the card, ask for 3-D Secure, or decline (402 with the PI's last_payment_error)."""
    pi = ctx.get("payment_intent", id)
    check_client_secret(ctx, pi, params.pop("client_secret", None))
    pi, error = intents.confirm_intent(ctx, pi, params)
    return error or pi


@resource.route("POST", "/v1/payment_intents/{id}/capture", params={
    "amount_to_capture": Int(min=1), "metadata": Metadata(), "statement_descriptor": Str(),
    "statement_descriptor_suffix": Str(), "application_fee_amount": Int(min=0), "final_capture": Bool()})
def capture(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Capture an authorised (capture_method=manual) PaymentIntent, fully or partly."""
    pi = ctx.get("payment_intent", id)
    if "metadata" in params:
        pi["metadata"] = apply_metadata(pi.get("metadata"), params["metadata"])
    return intents.capture_intent(ctx, pi, params.get("amount_to_capture"))


@resource.route("POST", "/v1/payment_intents/{id}/cancel", params={"cancellation_reason": Enum(
    "duplicate", "fraudulent", "requested_by_customer", "abandoned")})
def cancel(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Cancel a PaymentIntent that has not succeeded; an authorisation is released."""
    pi = ctx.get("payment_intent", id)
    if pi["status"] in ("succeeded", "canceled"):
        raise StripeError(f"You cannot cancel this PaymentIntent because it has a status of {pi['status']}. Only a "
                          "PaymentIntent with one of the following statuses may be canceled: requires_payment_method, "
                          "requires_capture, requires_confirmation, requires_action, processing.",
                          code="payment_intent_unexpected_state")
    return intents.cancel_intent(ctx, pi, params.get("cancellation_reason"))


@resource.route("GET", "/v1/payment_intents", params={**LIST_PARAMS, "customer": Str()})
def list_intents(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """List PaymentIntents, optionally for one customer."""
    customer = params.get("customer")
    return ctx.list_page("payment_intent", params, "/v1/payment_intents",
                         where=None if customer is None else (lambda p: p.get("customer") == customer))
