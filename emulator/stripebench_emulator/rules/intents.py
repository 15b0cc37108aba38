"""The PaymentIntent's life: made, confirmed (a test card's outcome: succeeded, declined, 3-D Secure), authenticated,
captured, canceled; what the API, Checkout, Billing and the payment pages all go through.

* ``create_confirmed(ctx, amount, currency, customer=None, payment_method=None, metadata=None, **fields)
  -> (pi, error)`` — create and confirm in one go; ``error`` is the ``StripeError`` a decline or failure
  would answer (``None`` on success or requires_action). ``payment_method`` may be a stored id or a magic id.
* ``confirm_intent(ctx, pi, payment_method=None, off_session=False, return_url=None) -> (pi, error)``.
* ``cancel_intent(ctx, pi, reason) -> pi`` — cancel (``payment_intent.canceled``) with the reason Stripe records.
* ``complete_authentication(ctx, pi, success: bool) -> pi`` — finish a requires_action PI as the 3-D Secure
  page's Complete / Fail buttons do (success charges the card, which may still decline).
* ``AUTHENTICATE_PATH`` (``/3ds/authenticate/{id}``) — where ``next_action.redirect_to_url.url`` points; the pages
  module serves it (with Complete / Fail buttons that call ``complete_authentication``).
* ``ON_SUCCEEDED`` — hooks called after a PaymentIntent succeeds (Billing pays the invoice it belongs to).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from stripebench_emulator.model.context import RequestContext
from stripebench_emulator.model.errors import StripeError, invalid
from stripebench_emulator.model.fields import apply_metadata
from stripebench_emulator.rules import charging, methods

AUTHENTICATE_PATH = "/3ds/authenticate/{id}"


# Called as hook(ctx, pi) after a PI succeeds (billing pays the invoice a subscription's PI belongs to).
ON_SUCCEEDED: list[Callable[[RequestContext, dict[str, Any]], None]] = []


_MINIMUMS = {"usd": 50, "eur": 50, "cad": 50, "aud": 50, "gbp": 30, "chf": 50, "jpy": 50}


def unexpected_state(pi: dict[str, Any], action: str, allowed: str) -> StripeError:
    return StripeError(f"This PaymentIntent's {action} could not be completed because it has a status of "
                       f"{pi['status']}. Only a PaymentIntent with one of the following statuses may be {allowed}.",
                       code="payment_intent_unexpected_state", extra={"payment_intent": pi["id"]})


def _pm_from_params(ctx: RequestContext, pi: dict[str, Any], params: dict[str, Any]) -> None:
    if params.get("payment_method_data"):
        data = params["payment_method_data"]
        if data["type"] != "card" or not data.get("card"):
            raise invalid("payment_method_data must be a card with card[number], card[exp_month], card[exp_year].",
                          param="payment_method_data")
        c = data["card"]
        if c.get("token"):
            pm = methods.resolve(ctx, c["token"], param="payment_method_data[card][token]")
        else:
            pm = methods.create_card(ctx, c.get("number", ""), c.get("exp_month", 12), c.get("exp_year", 34),
                                             c.get("cvc"), data.get("billing_details"), data.get("metadata"))
        pi["payment_method"] = pm["id"]
    elif params.get("payment_method"):
        pi["payment_method"] = methods.resolve(ctx, params["payment_method"])["id"]


def apply_params(ctx: RequestContext, pi: dict[str, Any], params: dict[str, Any]) -> None:
    for key in ("amount", "currency", "description", "receipt_email", "statement_descriptor",
                "statement_descriptor_suffix", "transfer_group", "capture_method", "application_fee_amount"):
        if key in params:
            pi[key] = params[key]
    if "setup_future_usage" in params:
        pi["setup_future_usage"] = params["setup_future_usage"]
    if "shipping" in params:
        pi["shipping"] = params["shipping"]
    if params.get("customer"):
        pi["customer"] = ctx.peek("customer", params["customer"], param="customer")["id"]
    if "metadata" in params:
        pi["metadata"] = apply_metadata(pi.get("metadata"), params["metadata"])
    if params.get("payment_method_types"):
        pi["payment_method_types"] = params["payment_method_types"]
        pi["_apm_default"] = False
    if "amount" in params:
        minimum = _MINIMUMS.get(pi["currency"])
        if minimum and params["amount"] < minimum:
            raise invalid(f"Amount must be at least {minimum / 100:.2f} {pi['currency']}", param="amount",
                          code="amount_too_small")
    _pm_from_params(ctx, pi, params)


def new_intent(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Build, save and announce (payment_intent.created) a PI from cleaned create params."""
    pi_id = ctx.new_id("pi")
    apm = params.get("automatic_payment_methods")
    pi: dict[str, Any] = {
        "id": pi_id, "object": "payment_intent", "amount": 0, "amount_capturable": 0,
        "amount_details": {"tip": {}}, "amount_received": 0, "application": None, "application_fee_amount": None,
        "automatic_payment_methods": ({"allow_redirects": apm.get("allow_redirects", "always"),
                                       "enabled": apm["enabled"]} if apm else None),
        "canceled_at": None, "cancellation_reason": None, "capture_method": None,
        "client_secret": f"{pi_id}_secret_{ctx.emulator.ids.token('secret', 25)}",
        "confirmation_method": params.get("confirmation_method", "automatic"), "created": ctx.now(),
        "currency": params["currency"], "customer": None, "description": None, "last_payment_error": None,
        "latest_charge": None, "livemode": False, "metadata": {}, "next_action": None, "on_behalf_of": None,
        "payment_method": None, "payment_method_configuration_details": None,
        "payment_method_options": {"card": {"installments": None, "mandate_options": None, "network": None,
                                            "request_three_d_secure": "automatic"}},
        "payment_method_types": ["card"], "processing": None, "receipt_email": None, "review": None,
        "setup_future_usage": None, "shipping": None, "source": None, "statement_descriptor": None,
        "statement_descriptor_suffix": None, "status": "requires_payment_method", "transfer_data": None,
        "transfer_group": None, "_apm_default": not params.get("payment_method_types") and apm is None,
    }
    apply_params(ctx, pi, params)
    if pi["payment_method"]:
        pi["status"] = "requires_confirmation"
    ctx.save(pi)
    ctx.emit("payment_intent.created", pi)
    return pi


def _fail(ctx: RequestContext, pi: dict[str, Any], pm: dict[str, Any], error: StripeError,
          charge: dict[str, Any] | None) -> tuple[dict[str, Any], StripeError]:
    """Record a failed attempt: PI back to requires_payment_method with last_payment_error; the 402 to answer."""
    pi["status"] = "requires_payment_method"
    pi["next_action"] = None
    pi["payment_method"] = None
    last = {"code": error.code, "doc_url": f"https://stripe.com/docs/error-codes/{(error.code or '').replace('_', '-')}",
            "message": error.message, "payment_method": ctx.render(pm), "type": error.type}
    if error.decline_code:
        last["decline_code"] = error.decline_code
    if charge is not None:
        last["charge"] = charge["id"]
        pi["latest_charge"] = charge["id"]
    pi["last_payment_error"] = last
    ctx.save(pi)
    ctx.emit("payment_intent.payment_failed", pi)
    error.extra.update({"payment_intent": ctx.render(pi), "payment_method": ctx.render(pm)})
    if charge is not None:
        error.extra["charge"] = charge["id"]
    return pi, error


def _charge(ctx: RequestContext, pi: dict[str, Any], pm: dict[str, Any]) -> tuple[dict[str, Any], StripeError | None]:
    card = methods.test_card(pm)
    succeeded = card.outcome == "success"
    manual = pi.get("capture_method") == "manual"
    charge = charging.new_charge(ctx, pi, pm, card, succeeded, capture=not manual)
    if not succeeded:
        return _fail(ctx, pi, pm, card.decline_error(), charge)
    pi["latest_charge"] = charge["id"]
    pi["next_action"] = None
    pi["last_payment_error"] = None
    if pi.get("setup_future_usage") and pi.get("customer") and not pm.get("customer"):
        methods.attach(ctx, pm, pi["customer"])
    if manual:
        pi["status"] = "requires_capture"
        pi["amount_capturable"] = pi["amount"]
        ctx.save(pi)
        ctx.emit("payment_intent.amount_capturable_updated", pi)
    else:
        pi["status"] = "succeeded"
        pi["amount_received"] = pi["amount"]
        ctx.save(pi)
        ctx.emit("payment_intent.succeeded", pi)
        for hook in ON_SUCCEEDED:
            hook(ctx, pi)
    return pi, None


def confirm_intent(ctx: RequestContext, pi: dict[str, Any], params: dict[str, Any] | None = None
                   ) -> tuple[dict[str, Any], StripeError | None]:
    """Confirm ``pi`` (params as the confirm endpoint takes them); returns the PI and the error to answer, if any."""
    params = params or {}
    confirmable = ("requires_payment_method", "requires_confirmation", "requires_action")
    if pi["status"] not in confirmable and (params.get("payment_method") or params.get("payment_method_data")):
        raise StripeError(f"This PaymentIntent's payment_method could not be updated because it has a status of "
                          f"{pi['status']}. You may only update the payment_method of a PaymentIntent with one of the "
                          f"following statuses: {', '.join(confirmable)}.", code="payment_intent_unexpected_state")
    if pi["status"] not in confirmable:
        raise StripeError(f"You cannot confirm this PaymentIntent because it has a status of {pi['status']}.",
                          code="payment_intent_unexpected_state")
    for key in ("receipt_email", "setup_future_usage", "shipping", "capture_method"):
        if key in params:
            pi[key] = params[key]
    if params.get("payment_method_types"):
        pi["payment_method_types"] = params["payment_method_types"]
    _pm_from_params(ctx, pi, params)
    if not pi["payment_method"]:
        raise StripeError("You cannot confirm this PaymentIntent because it's missing a payment method. You can "
                          "either update the PaymentIntent with a payment method and then confirm it again, or "
                          "confirm it again directly with a payment method or ConfirmationToken.",
                          code="payment_intent_unexpected_state")
    pm = methods.resolve(ctx, pi["payment_method"])
    if pm.get("customer") and pi.get("customer") and pm["customer"] != pi["customer"]:
        raise invalid("The provided PaymentMethod belongs to a different customer than this PaymentIntent.",
                      param="payment_method")
    if pm.get("customer") and not pi.get("customer"):
        raise invalid(f"The provided PaymentMethod belongs to a Customer ({pm['customer']}), but you did not "
                      "provide one. Please include the Customer in the `customer` parameter on the PaymentIntent.",
                      param="payment_method")
    card = methods.test_card(pm)
    off_session = params.get("off_session") not in (None, "false", "")
    needs_auth = not pi.get("_authenticated") and (card.three_d_secure in ("always", "required") or (
        card.three_d_secure == "on_session" and not off_session))
    if needs_auth and off_session:
        return _fail(ctx, pi, pm, card.decline_error() if card.decline == "authentication_required" else StripeError(
            "Your card was declined. This transaction requires authentication.", status=402, type="card_error",
            code="authentication_required", decline_code="authentication_required"), None)
    if needs_auth:
        if params.get("error_on_requires_action"):
            return _fail(ctx, pi, pm, StripeError("This payment required an authentication action to complete, but "
                                                  "`error_on_requires_action` was set.", status=402, type="card_error",
                                                  code="authentication_required",
                                                  decline_code="authentication_required"), None)
        pi["status"] = "requires_action"
        url = ctx.base_url + AUTHENTICATE_PATH.format(id=pi["id"]) + f"?client_secret={pi['client_secret']}"
        if params.get("return_url"):
            pi["next_action"] = {"type": "redirect_to_url",
                                 "redirect_to_url": {"return_url": params["return_url"], "url": url}}
        else:
            pi["next_action"] = {"type": "use_stripe_sdk", "use_stripe_sdk": {
                "type": "three_d_secure_redirect", "stripe_js": url, "source": "src_" + pi["id"][3:]}}
        ctx.save(pi)
        ctx.emit("payment_intent.requires_action", pi)
        return pi, None
    return _charge(ctx, pi, pm)


def complete_authentication(ctx: RequestContext, pi: dict[str, Any], success: bool) -> dict[str, Any]:
    """Finish 3-D Secure for a requires_action PI: success charges the card; failure records the failed attempt."""
    if pi["status"] != "requires_action":
        raise unexpected_state(pi, "authentication", "authenticated: requires_action")
    pm = methods.resolve(ctx, pi["payment_method"])
    if not success:
        err = StripeError("The provided PaymentMethod has failed authentication. You can provide payment_method_data "
                          "or a new PaymentMethod to attempt to fulfill this PaymentIntent again.",
                          code="payment_intent_authentication_failure")
        return _fail(ctx, pi, pm, err, None)[0]
    card = methods.test_card(pm)
    if card.outcome == "decline_after_auth":
        charge = charging.new_charge(ctx, pi, pm, card, succeeded=False)
        return _fail(ctx, pi, pm, card.decline_error(), charge)[0]
    if pi.get("confirmation_method") == "manual":  # the server confirms again; that attempt skips authentication
        pi.update(status="requires_confirmation", next_action=None, _authenticated=True)
        ctx.save(pi)
        return pi
    return _charge(ctx, pi, pm)[0]


def create_confirmed(ctx: RequestContext, amount: int, currency: str, customer: str | None = None,
                     payment_method: str | None = None, metadata: dict[str, Any] | None = None, **fields: Any
                     ) -> tuple[dict[str, Any], StripeError | None]:
    """Create and confirm a PI in one step (Checkout); returns (pi, error-or-None)."""
    params: dict[str, Any] = {"amount": amount, "currency": currency, **fields}
    if customer:
        params["customer"] = customer
    if payment_method:
        params["payment_method"] = payment_method
    if metadata:
        params["metadata"] = metadata
    confirm_params: dict[str, Any] = {k: params.pop(k) for k in ("off_session", "return_url", "error_on_requires_action")
                      if k in params}
    pi = new_intent(ctx, params)
    return confirm_intent(ctx, pi, confirm_params)


def capture_intent(ctx: RequestContext, pi: dict[str, Any], amount: int | None) -> dict[str, Any]:
    """Capture an authorised PI (``amount`` ≤ amount_capturable; None = all)."""
    if pi["status"] != "requires_capture":
        raise StripeError(f"This PaymentIntent could not be captured because it has a status of {pi['status']}. Only "
                          "a PaymentIntent with one of the following statuses may be captured: requires_capture.",
                          code="payment_intent_unexpected_state")
    amount = pi["amount_capturable"] if amount is None else amount
    if amount > pi["amount_capturable"]:
        raise invalid(f"The amount to capture ({amount}) is greater than the amount capturable "
                      f"({pi['amount_capturable']}).", param="amount_to_capture", code="amount_too_large")
    charge = ctx.get("charge", pi["latest_charge"])
    charging.capture_charge(ctx, charge, amount)
    pi["amount_received"] = amount
    pi["amount_capturable"] = 0
    pi["status"] = "succeeded"
    ctx.save(pi)
    ctx.emit("payment_intent.succeeded", pi)
    return pi


def cancel_intent(ctx: RequestContext, pi: dict[str, Any], reason: str | None) -> dict[str, Any]:
    """Cancel a PI that has not succeeded (an authorisation is released) and emit ``payment_intent.canceled``;
    ``reason`` is the caller's or one Stripe sets itself (``void_invoice`` when its invoice is voided)."""
    if pi["status"] == "requires_capture" and pi.get("latest_charge"):
        charge = ctx.get("charge", pi["latest_charge"])
        charge.update(refunded=True, amount_refunded=charge["amount"])
        ctx.save(charge)
    pi.update(status="canceled", canceled_at=ctx.now(), cancellation_reason=reason,
              amount_capturable=0, next_action=None)
    ctx.save(pi)
    ctx.emit("payment_intent.canceled", pi)
    return pi
