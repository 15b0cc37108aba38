"""Setup intents: create, retrieve, update, confirm, cancel, list; success attaches the card to the customer.

Internal API for Checkout (setup mode) and the pages:

* ``create_confirmed(ctx, customer, payment_method, usage="off_session", metadata=None, **fields) -> (si, error)``.
* ``confirm_setup(ctx, si, params) -> (si, error)``; ``complete_authentication(ctx, si, success) -> si``
  (3-D Secure cards put the SI in requires_action; ``next_action`` points at ``intents.AUTHENTICATE_PATH``).
"""

from __future__ import annotations

from typing import Any

from stripebench_emulator.api.payment_intents import PM_DATA, Loose, check_client_secret
from stripebench_emulator.model.context import LIST_PARAMS, RequestContext
from stripebench_emulator.model.errors import StripeError, invalid
from stripebench_emulator.model.fields import apply_metadata
from stripebench_emulator.model.params import Array, Bool, Enum, Hash, Metadata, Param, Str
from stripebench_emulator.model.registry import Resource
from stripebench_emulator.rules import intents, methods

resource = Resource("setup_intent", prefix="seti", noun="setup_intent",
                    expandable={"customer": "customer", "payment_method": "payment_method"})

CONFIRM: dict[str, Param] = {"payment_method": Str(), "payment_method_data": PM_DATA, "payment_method_options": Loose(),
                             "return_url": Str(), "mandate_data": Loose(), "use_stripe_sdk": Bool(),
                             "client_secret": Str(), "confirmation_token": Str()}
UPDATE: dict[str, Param] = {"customer": Str(), "description": Str(emptyable=True), "metadata": Metadata(),
                            "payment_method": Str(), "payment_method_types": Array(Str()),
                            "payment_method_options": Loose(), "payment_method_data": PM_DATA,
                            "flow_directions": Array(Str())}
CREATE: dict[str, Param] = {**UPDATE, **CONFIRM, "confirm": Bool(), "usage": Enum("on_session", "off_session"),
                            "automatic_payment_methods": Hash({"enabled": Bool(required=True),
                                                               "allow_redirects": Enum("always", "never")}),
                            "on_behalf_of": Str(), "single_use": Loose(), "attach_to_self": Bool(),
                            "payment_method_configuration": Str()}
del CREATE["client_secret"]


def _apply(ctx: RequestContext, si: dict[str, Any], params: dict[str, Any]) -> None:
    if params.get("customer"):
        si["customer"] = ctx.get("customer", params["customer"], param="customer")["id"]
    if "description" in params:
        si["description"] = params["description"]
    if "metadata" in params:
        si["metadata"] = apply_metadata(si.get("metadata"), params["metadata"])
    if params.get("payment_method_types"):
        si["payment_method_types"] = params["payment_method_types"]
    if params.get("payment_method_data"):
        c = params["payment_method_data"].get("card") or {}
        pm = (methods.resolve(ctx, c["token"]) if c.get("token") else
              methods.create_card(ctx, c.get("number", ""), c.get("exp_month", 12), c.get("exp_year", 34),
                                          c.get("cvc"), params["payment_method_data"].get("billing_details")))
        si["payment_method"] = pm["id"]
    elif params.get("payment_method"):
        si["payment_method"] = methods.resolve(ctx, params["payment_method"])["id"]


def new_setup_intent(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Build, save and announce (setup_intent.created) an SI from cleaned create params."""
    si_id = ctx.new_id("seti")
    apm = params.get("automatic_payment_methods")
    si: dict[str, Any] = {
        "id": si_id, "object": "setup_intent", "application": None,
        "automatic_payment_methods": {"allow_redirects": apm.get("allow_redirects", "always"),
                                      "enabled": apm["enabled"]} if apm else None,
        "cancellation_reason": None, "client_secret": f"{si_id}_secret_{ctx.emulator.ids.token('secret', 25)}",
        "created": ctx.now(), "customer": None, "description": None, "flow_directions": params.get("flow_directions"),
        "last_setup_error": None, "latest_attempt": None, "livemode": False, "mandate": None, "metadata": {},
        "next_action": None, "on_behalf_of": None, "payment_method": None,
        "payment_method_configuration_details": None,
        "payment_method_options": {"card": {"mandate_options": None, "network": None,
                                            "request_three_d_secure": "automatic"}},
        "payment_method_types": ["card"], "single_use_mandate": None, "status": "requires_payment_method",
        "usage": params.get("usage", "off_session"),
    }
    _apply(ctx, si, params)
    if si["payment_method"]:
        si["status"] = "requires_confirmation"
    ctx.save(si)
    ctx.emit("setup_intent.created", si)
    return si


def _fail(ctx: RequestContext, si: dict[str, Any], pm: dict[str, Any], error: StripeError
          ) -> tuple[dict[str, Any], StripeError]:
    si.update(status="requires_payment_method", next_action=None, payment_method=None)
    last = {"code": error.code, "message": error.message, "payment_method": ctx.render(pm), "type": error.type,
            "doc_url": f"https://stripe.com/docs/error-codes/{(error.code or '').replace('_', '-')}"}
    if error.decline_code:
        last["decline_code"] = error.decline_code
    si["last_setup_error"] = last
    ctx.save(si)
    ctx.emit("setup_intent.setup_failed", si)
    error.extra.update({"setup_intent": ctx.render(si), "payment_method": ctx.render(pm)})
    return si, error


def _succeed(ctx: RequestContext, si: dict[str, Any], pm: dict[str, Any]) -> tuple[dict[str, Any], None]:
    if si.get("customer") and pm.get("customer") != si["customer"]:
        pm["customer"] = si["customer"]  # the check already passed at confirm; attach without a second one
        ctx.save(pm)
        ctx.emit("payment_method.attached", pm)
    si.update(status="succeeded", next_action=None, last_setup_error=None, latest_attempt=ctx.new_id("setatt"))
    ctx.save(si)
    ctx.emit("setup_intent.succeeded", si)
    return si, None


def confirm_setup(ctx: RequestContext, si: dict[str, Any], params: dict[str, Any] | None = None
                  ) -> tuple[dict[str, Any], StripeError | None]:
    """Confirm ``si``: declining cards fail, 3-D Secure cards ask for authentication, others succeed."""
    params = params or {}
    if si["status"] not in ("requires_payment_method", "requires_confirmation", "requires_action"):
        raise StripeError(f"You cannot confirm this SetupIntent because it has a status of {si['status']}.",
                          code="setup_intent_unexpected_state")
    _apply(ctx, si, {k: v for k, v in params.items() if k in ("payment_method", "payment_method_data")})
    if not si["payment_method"]:
        raise StripeError("You cannot confirm this SetupIntent because it's missing a payment method.",
                          code="setup_intent_unexpected_state")
    pm = methods.resolve(ctx, si["payment_method"])
    card = methods.test_card(pm)
    if card.attach_fails:
        return _fail(ctx, si, pm, card.decline_error())
    if card.three_d_secure:
        si["status"] = "requires_action"
        url = ctx.base_url + intents.AUTHENTICATE_PATH.format(id=si["id"]) + f"?client_secret={si['client_secret']}"
        si["next_action"] = ({"type": "redirect_to_url", "redirect_to_url": {"return_url": params["return_url"],
                                                                            "url": url}}
                             if params.get("return_url") else
                             {"type": "use_stripe_sdk", "use_stripe_sdk": {"type": "three_d_secure_redirect",
                                                                           "stripe_js": url}})
        ctx.save(si)
        ctx.emit("setup_intent.requires_action", si)
        return si, None
    return _succeed(ctx, si, pm)


def complete_authentication(ctx: RequestContext, si: dict[str, Any], success: bool) -> dict[str, Any]:
    """Finish 3-D Secure on a requires_action SetupIntent."""
    if si["status"] != "requires_action":
        raise StripeError(f"This SetupIntent has a status of {si['status']}, not requires_action.",
                          code="setup_intent_unexpected_state")
    pm = methods.resolve(ctx, si["payment_method"])
    if not success:
        return _fail(ctx, si, pm, StripeError(
            "The latest attempt to set up the payment method has failed because authentication failed.",
            code="setup_intent_authentication_failure"))[0]
    return _succeed(ctx, si, pm)[0]


def create_confirmed(ctx: RequestContext, customer: str | None, payment_method: str, usage: str = "off_session",
                     metadata: dict[str, Any] | None = None, **fields: Any) -> tuple[dict[str, Any], StripeError | None]:
    """Create and confirm a SetupIntent (Checkout setup mode); returns (si, error-or-None)."""
    params: dict[str, Any] = {"payment_method": payment_method, "usage": usage, **fields}
    if customer:
        params["customer"] = customer
    if metadata:
        params["metadata"] = metadata
    return confirm_setup(ctx, new_setup_intent(ctx, params))


@resource.route("POST", "/v1/setup_intents", params=CREATE)
def create(ctx: RequestContext, params: dict[str, Any]) -> Any:
    """Create a SetupIntent (``confirm=true`` confirms it too)."""
    confirm_params: dict[str, Any] = {k: params.pop(k) for k in ("confirm", "return_url", "mandate_data", "use_stripe_sdk",
                                                  "confirmation_token") if k in params}
    si = new_setup_intent(ctx, params)
    if confirm_params.get("confirm"):
        si, error = confirm_setup(ctx, si, confirm_params)
        return error or si
    return si


@resource.route("GET", "/v1/setup_intents/{id}", params={"client_secret": Str()}, publishable=True)
def retrieve(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Retrieve a SetupIntent (a publishable key needs the client_secret)."""
    si = ctx.get("setup_intent", id)
    check_client_secret(ctx, si, params.get("client_secret"))
    return si


@resource.route("POST", "/v1/setup_intents/{id}", params=UPDATE)
def update(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Update a SetupIntent."""
    si = ctx.get("setup_intent", id)
    if si["status"] in ("succeeded", "canceled") and set(params) - {"metadata", "description"}:
        raise invalid(f"This SetupIntent has a status of {si['status']} and cannot be updated.",
                      code="setup_intent_unexpected_state")
    _apply(ctx, si, params)
    if si["payment_method"] and si["status"] == "requires_payment_method":
        si["status"] = "requires_confirmation"
    ctx.save(si)  # Stripe has no setup_intent.updated event
    return si


@resource.route("POST", "/v1/setup_intents/{id}/confirm", params=CONFIRM, publishable=True)
def confirm(ctx: RequestContext, params: dict[str, Any], id: str) -> Any:
    """Confirm a SetupIntent."""
    si = ctx.get("setup_intent", id)
    check_client_secret(ctx, si, params.pop("client_secret", None))
    si, error = confirm_setup(ctx, si, params)
    return error or si


@resource.route("POST", "/v1/setup_intents/{id}/cancel", params={"cancellation_reason": Enum(
    "abandoned", "duplicate", "requested_by_customer")})
def cancel(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Cancel a SetupIntent that has not succeeded."""
    si = ctx.get("setup_intent", id)
    if si["status"] in ("succeeded", "canceled"):
        raise StripeError(f"You cannot cancel this SetupIntent because it has a status of {si['status']}.",
                          code="setup_intent_unexpected_state")
    si.update(status="canceled", cancellation_reason=params.get("cancellation_reason"), next_action=None)
    ctx.save(si)
    ctx.emit("setup_intent.canceled", si)
    return si


@resource.route("GET", "/v1/setup_intents", params={**LIST_PARAMS, "customer": Str(), "payment_method": Str(),
                                                   "attach_to_self": Bool()})
def list_setup_intents(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """List SetupIntents by ``customer`` / ``payment_method``."""
    customer, pm = params.get("customer"), params.get("payment_method")
    return ctx.list_page("setup_intent", params, "/v1/setup_intents",
                         where=lambda s: (customer is None or s.get("customer") == customer)
                         and (pm is None or s.get("payment_method") == pm))
