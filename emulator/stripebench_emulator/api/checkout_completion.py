"""Completing a Checkout Session from its payment form: pay (or save the card), then the session is complete.

Used by the browser pages (``emulator/web/pages/checkout.py``); no API routes. Every function returns a plain dict for
the page — ``{"status": "complete", "redirect": url|None}``, ``{"requires_action": True, "url": …}`` or
``{"error": {"message", "code", "decline_code", "field"}}`` — and never raises a card error, so a declined attempt
(its failed charge and payment intent) is kept, as on Stripe. Payments go through ``rules/intents.py``; totals and
discounts through ``rules/checkout_totals.py``. It sits with the API modules because completing a session does what
their endpoints do (a customer made as ``POST /v1/customers`` makes it, a subscription as ``/v1/subscriptions``, a
SetupIntent confirmed as its endpoint confirms it) and calls them for it.
"""

from __future__ import annotations

import re
from typing import Any, cast

from stripebench_emulator.api import checkout_options as options
from stripebench_emulator.api import customers, setup_intents
from stripebench_emulator.api.checkout_sessions import new_item
from stripebench_emulator.api.subscriptions import create_subscription
from stripebench_emulator.model.context import RequestContext
from stripebench_emulator.model.errors import StripeError
from stripebench_emulator.rules import billing_changes as changes
from stripebench_emulator.rules import billing_cycle, billing_time, intents, methods, redemption
from stripebench_emulator.rules import checkout_totals as totals
from stripebench_emulator.rules.invoice_lifecycle import create_paid_invoice

_EXPIRY = re.compile(r"^\s*(\d{1,2})\s*/\s*(\d{2}|\d{4})\s*$|^\s*(\d{2})(\d{2})\s*$")  # "12 / 34" or "1234"



def _trial_end(ctx: RequestContext, terms: dict[str, Any]) -> int | None:
    """When the new subscription's trial ends: trial_period_days count from now, when it starts (as on Stripe)."""
    days = terms.get("trial_period_days")
    return ctx.now() + days * options.DAY if days else terms.get("trial_end")

def _error(message: str, field: str | None = None, code: str | None = None,
           decline_code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "field": field, "code": code, "decline_code": decline_code}}


def _from_stripe_error(err: StripeError) -> dict[str, Any]:
    field = {"number": "card_number", "exp_month": "expiry", "exp_year": "expiry", "cvc": "cvc"}.get(err.param or "")
    return _error(err.message, field, err.code, err.decline_code)


def _address(form: dict[str, Any], prefix: str) -> dict[str, Any]:
    return {k: (form.get(f"{prefix}_{k}") or "").strip() or None
            for k in ("line1", "line2", "city", "state", "postal_code", "country")}


def _validate(session: dict[str, Any], form: dict[str, Any]) -> dict[str, Any] | None:
    """A page error for the first missing or malformed field, or None."""
    if session["status"] != "open":
        return _error(f"This Checkout Session is no longer active (status: {session['status']}).")
    if not (form.get("email") or "").strip() or "@" not in form["email"]:
        return _error("Your email address is incomplete.", "email")
    if not (form.get("card_number") or "").replace(" ", ""):
        return _error("Your card number is incomplete.", "card_number")
    if not _EXPIRY.match(form.get("expiry") or ""):
        return _error("Your card's expiration date is incomplete.", "expiry")
    if not re.fullmatch(r"\d{3,4}", (form.get("cvc") or "").strip()):
        return _error("Your card's security code is incomplete.", "cvc")
    if not (form.get("name") or "").strip():
        return _error("Your name is incomplete.", "name")
    if session.get("billing_address_collection") == "required":
        for key in ("country", "line1", "city", "postal_code"):
            if not (form.get(f"billing_{key}") or "").strip():
                return _error("Your billing address is incomplete.", f"billing_{key}")
    if session.get("shipping_address_collection"):
        allowed = session["shipping_address_collection"]["allowed_countries"]
        for key in ("country", "line1", "city", "postal_code"):
            if not (form.get(f"shipping_{key}") or "").strip():
                return _error("Your shipping address is incomplete.", f"shipping_{key}")
        if form["shipping_country"].strip().upper() not in allowed:
            return _error("We can't ship to this country.", "shipping_country")
    if session["phone_number_collection"]["enabled"] and not (form.get("phone") or "").strip():
        return _error("Your phone number is incomplete.", "phone")
    unanswered = options.validate_answers(session, form)
    if unanswered:
        return _error(*unanswered)
    return None


def _details(ctx: RequestContext, session: dict[str, Any], form: dict[str, Any]) -> dict[str, Any]:
    billing = _address(form, "billing")
    customer = ctx.find("customer", session["customer"]) if session.get("customer") else None
    locked = session.get("customer_email") or (customer or {}).get("email")  # the page shows these read-only
    return {"address": billing if any(billing.values()) else None,
            "email": locked or form["email"].strip(), "name": form["name"].strip(),
            "phone": (form.get("phone") or "").strip() or None, "tax_exempt": "none", "tax_ids": []}


def submit(ctx: RequestContext, session: dict[str, Any], form: dict[str, Any]) -> dict[str, Any]:
    """Handle the Pay / Subscribe / Save button: validate, make the card, then pay or save it."""
    problem = _validate(session, form)
    if problem:
        return problem
    details = _details(ctx, session, form) | options.record_answers(session, form)
    month, year = (int(part) for part in cast(re.Match[str], _EXPIRY.match(form["expiry"])).groups()  # _validate matched it
                   if part is not None)
    try:
        pm = methods.create_card(ctx, form["card_number"], month, year, form["cvc"].strip(),
                                         billing_details={k: details[k] for k in ("email", "name", "phone")}
                                         | ({"address": details["address"]} if details["address"] else {}))
    except StripeError as exc:
        return _from_stripe_error(exc)
    session["_details"] = details
    session["_shipping"] = {"address": _address(form, "shipping"), "name": details["name"]} \
        if session.get("shipping_address_collection") else None
    session["_pending_pm"] = pm["id"]
    if session["mode"] == "setup":
        return _save_card(ctx, session, pm)
    amount = session["amount_total"] or 0
    if amount == 0:
        return _finish(ctx, session, pm, None)
    customer_id = _customer(ctx, session) if session["mode"] == "subscription" else session.get("customer")
    if session["mode"] == "subscription" or (session.get("customer_creation") == "always" and not customer_id):
        customer_id = customer_id or _customer(ctx, session)
    fields: dict[str, Any] = {}
    data = session["_payment_intent_data"]
    if session["mode"] == "payment":
        for key in ("description", "receipt_email", "statement_descriptor", "statement_descriptor_suffix",
                    "capture_method", "setup_future_usage"):
            if data.get(key):
                fields[key] = data[key]
    else:
        fields["setup_future_usage"] = "off_session"
        fields["description"] = "Subscription creation"
    if session["mode"] == "payment" and session.get("payment_intent"):
        pi = ctx.get("payment_intent", session["payment_intent"])
        if pi["status"] == "requires_payment_method":  # retry after a decline: same PI, new card
            pi, err = intents.confirm_intent(ctx, pi, {"payment_method": pm["id"]})
            return _after_payment(ctx, session, pm, pi, err)
    pi, err = intents.create_confirmed(
        ctx, amount, session["currency"], customer=customer_id, payment_method=pm["id"],
        metadata=data.get("metadata") if session["mode"] == "payment" else None, **fields)
    if session["mode"] == "payment":
        session["payment_intent"] = pi["id"]
    session["_pending_pi"] = pi["id"]
    ctx.save(session)
    return _after_payment(ctx, session, pm, pi, err)


def _after_payment(ctx: RequestContext, session: dict[str, Any], pm: dict[str, Any], pi: dict[str, Any],
                   err: StripeError | None) -> dict[str, Any]:
    if err is not None:
        ctx.save(session)
        return _from_stripe_error(err)
    if pi["status"] == "requires_action":
        ctx.save(session)
        action = pi.get("next_action") or {}
        url = (action.get("use_stripe_sdk") or {}).get("stripe_js") or (action.get("redirect_to_url") or {}).get("url")
        return {"requires_action": True, "payment_intent": pi["id"], "url": url}
    return _finish(ctx, session, ctx.get("payment_method", pm["id"]), pi)


def authenticate(ctx: RequestContext, session: dict[str, Any], success: bool) -> dict[str, Any]:
    """The 3-D Secure challenge's Complete / Fail: finish the pending payment or report the failure."""
    if session["status"] == "open" and session.get("_pending_si"):
        intent = ctx.get("setup_intent", session["_pending_si"])
        if intent["status"] == "requires_action":
            intent = setup_intents.complete_authentication(ctx, intent, success)
        if intent["status"] == "succeeded":
            return _finish(ctx, session, ctx.get("payment_method", session["_pending_pm"]), None)
        return _error("We are unable to authenticate your payment method. Please choose a different payment "
                      "method and try again.", "card_number", (intent.get("last_setup_error") or {}).get("code"))
    if session["status"] != "open" or not session.get("_pending_pi"):
        return _error("There is no payment waiting for authentication.")
    pi = ctx.get("payment_intent", session["_pending_pi"])
    if pi["status"] == "requires_action":
        pi = intents.complete_authentication(ctx, pi, success)
    if pi["status"] in ("succeeded", "requires_capture"):
        return _finish(ctx, session, ctx.get("payment_method", session["_pending_pm"]), pi)
    last = pi.get("last_payment_error") or {}
    if not success:
        return _error("We are unable to authenticate your payment method. Please choose a different payment "
                      "method and try again.", "card_number", last.get("code"))
    return _error(last.get("message") or "Your card was declined.", "card_number", last.get("code"),
                  last.get("decline_code"))


def _customer(ctx: RequestContext, session: dict[str, Any]) -> str:
    """The session's customer, created from the form's details when there is none yet."""
    if session.get("customer"):
        return session["customer"]
    details = session["_details"]
    params: dict[str, Any] = {"email": details["email"], "name": details["name"]}
    if details.get("phone"):
        params["phone"] = details["phone"]
    if details.get("address"):
        params["address"] = details["address"]
    customer = customers.create(ctx, params)
    session["customer"] = customer["id"]
    ctx.save(session)
    return customer["id"]


def _save_card(ctx: RequestContext, session: dict[str, Any], pm: dict[str, Any]) -> dict[str, Any]:
    """Setup mode: a SetupIntent for the card (the card is attached to the customer when there is one)."""
    data = session["_setup_intent_data"]
    fields = {"description": data["description"]} if data.get("description") else {}
    intent, err = setup_intents.create_confirmed(ctx, session.get("customer"), pm["id"],
                                                 metadata=data.get("metadata") or None, **fields)
    session["setup_intent"] = intent["id"]
    session["_pending_si"] = intent["id"]
    ctx.save(session)
    if err is not None:
        return _from_stripe_error(err)
    if intent["status"] == "requires_action":
        return {"requires_action": True, "setup_intent": intent["id"]}
    return _finish(ctx, session, pm, None)


def _finish(ctx: RequestContext, session: dict[str, Any], pm: dict[str, Any], pi: dict[str, Any] | None
            ) -> dict[str, Any]:
    """Mark the session complete, create what its mode needs, redeem the discount and emit ``completed``."""
    coupon, promo_id = totals.session_coupon(ctx, session)
    if session["mode"] == "subscription":
        customer_id = _customer(ctx, session)
        if pm.get("customer") != customer_id:
            methods.attach(ctx, pm, customer_id)
        # a customer on a test clock gets a subscription that lives on the clock's time, as the API's does
        clock = (ctx.find("customer", customer_id) or {}).get("test_clock")
        billed = billing_time.at(ctx, billing_time.clock_now(ctx, clock))
        sub = create_subscription(billed, customer_id, [{"price": i["price"], "quantity": i["quantity"]}
                                                     for i in session["_items"] if i["_recurring"]],
                                  metadata=session["_subscription_data"].get("metadata"),
                                  description=session["_subscription_data"].get("description"),
                                  default_payment_method=pm["id"],
                                  trial_end=_trial_end(billed, session.get("_terms") or {}),
                                  billing_cycle_anchor=(session.get("_terms") or {}).get("billing_cycle_anchor"),
                                  trial_settings=(session.get("_terms") or {}).get("trial_settings"), emit=False)
        sub["test_clock"] = clock
        # the session's coupon or promotion code becomes the subscription's discount, as the API's `discounts`
        # makes it (renewals then take it off while it lasts); its customer.discount.created comes first
        changes.discounts_from(billed, sub, [{"promotion_code": promo_id} if promo_id else {"coupon": coupon["id"]}]
                               if coupon else None, billed.now(), checked=False)
        ctx.save(sub)
        ctx.emit("customer.subscription.created", sub)
        discount_id = sub["discounts"][0] if sub["discounts"] else None
        lines = [{"price": i["price"], "quantity": i["quantity"], "amount": i["amount_subtotal"],
                  "discount": i["amount_discount"]} for i in session["_items"]]
        amount_off = (session["total_details"] or {}).get("amount_discount", 0)
        invoice = create_paid_invoice(billed, sub, lines, payment_intent=pi["id"] if pi else None,
                                      discount_amount=amount_off, discount_id=discount_id)
        if amount_off:
            billing_cycle.discount_used(sub, discount_id)
            ctx.save(sub)
        session["subscription"], session["invoice"] = sub["id"], invoice["id"]
    elif session["mode"] == "payment" and (session["invoice_creation"] or {}).get("enabled") and pi:
        # invoice_creation: a paid invoice (for the customer, created when there is none) records the payment
        customer_id = _customer(ctx, session)
        data = session["invoice_creation"].get("invoice_data") or {}
        lines = [{"price": i["price"], "quantity": i["quantity"], "amount": i["amount_subtotal"],
                  "discount": i["amount_discount"]} for i in session["_items"]]
        invoice = create_paid_invoice(ctx, None, lines, payment_intent=pi["id"], customer_id=customer_id,
                                      currency=session["currency"], billing_reason="manual",
                                      metadata=data.get("metadata") if isinstance(data.get("metadata"), dict) else None,
                                      discount_amount=(session["total_details"] or {}).get("amount_discount", 0))
        session["invoice"] = invoice["id"]
    elif session["mode"] == "payment" and session.get("customer_creation") == "always":
        _customer(ctx, session)
    # the redemption is counted now (checked when the code was applied); a subscription's discount has counted it
    # already (billing_changes.discounts_from)
    if coupon and session["mode"] != "subscription":
        redemption.record(ctx, coupon["id"], promo_id)
    details = session.pop("_details", None) or {}
    session["customer_details"] = {"address": details.get("address"), "business_name": details.get("business_name"),
                                   "email": details.get("email"), "individual_name": None,
                                   "name": details.get("name"), "phone": details.get("phone"),
                                   "tax_exempt": "none", "tax_ids": details.get("tax_ids") or []}
    shipping = session.pop("_shipping", None)
    if shipping:
        session["collected_information"] = {"business_name": None, "individual_name": None,
                                            "shipping_details": shipping}
    session["status"] = "complete"
    if session["mode"] == "setup" or not session.get("amount_total"):
        session["payment_status"] = "no_payment_required"
    else:
        session["payment_status"] = "paid"
    for key in ("_pending_pi", "_pending_pm", "_pending_si"):
        session.pop(key, None)
    ctx.save(session)
    ctx.emit("checkout.session.completed", session)
    return {"status": "complete", "redirect": redirect_url(session)}


def redirect_url(session: dict[str, Any]) -> str | None:
    """Where the customer goes after completing: success_url or return_url with the session id filled in."""
    if session["_ui"] == "hosted":
        url = session.get("success_url")
    else:
        # card payments never need a redirect, so only "always" sends the buyer to return_url
        url = session.get("return_url") if session.get("redirect_on_completion") == "always" else None
    return url.replace("{CHECKOUT_SESSION_ID}", session["id"]) if url else None


def apply_promotion_code(ctx: RequestContext, session: dict[str, Any], code: str) -> dict[str, Any] | None:
    """Apply a typed promotion code (None on success, else the page error); ``""`` removes the discount."""
    if session["status"] != "open" or not session.get("allow_promotion_codes"):
        return _error("Promotion codes cannot be used with this Checkout Session.", "promotion_code")
    if not code.strip():
        session["discounts"] = []
    else:
        promo = totals.find_promotion_code(ctx, code)
        if promo is None:
            return _error("This code is invalid.", "promotion_code")
        problem = totals.promotion_problem(ctx, session, promo)
        if problem:
            return _error(problem, "promotion_code")
        session["discounts"] = [{"coupon": None, "promotion_code": promo["id"]}]
    totals.recompute(ctx, session)
    ctx.save(session)
    return None


def set_quantity(ctx: RequestContext, session: dict[str, Any], index: object, quantity: object) -> dict[str, Any] | None:
    """Change an adjustable line item's quantity within its bounds (None on success, else the page error)."""
    items = session["_items"]
    if session["status"] != "open" or not isinstance(index, int) or not 0 <= index < len(items):
        return _error("This item cannot be changed.")
    adjustable = items[index].get("adjustable_quantity") or {}
    if not adjustable.get("enabled"):
        return _error("This item's quantity is fixed.")
    low, high = adjustable.get("minimum") or 0, adjustable.get("maximum") or 99
    if not isinstance(quantity, int) or not low <= quantity <= high:
        return _error(f"Choose a quantity from {low} to {high}.")
    if quantity == 0 and sum(i["quantity"] for i in items) - items[index]["quantity"] == 0:
        return _error("Your order needs at least one item.")
    session["_items"] = [{**item, "quantity": quantity} if i == index else item for i, item in enumerate(items)]
    totals.recompute(ctx, session)
    ctx.save(session)
    return None


def add_optional_item(ctx: RequestContext, session: dict[str, Any], index: object) -> dict[str, Any] | None:
    """The buyer adds one of the session's ``optional_items`` to the order (None on success, else the page error)."""
    offered = session.get("optional_items") or []
    added = session.setdefault("_added_optional", [])
    if session["status"] != "open" or not isinstance(index, int) or not 0 <= index < len(offered) or index in added:
        return _error("This item cannot be added.")
    offer = offered[index]
    price = ctx.get("price", offer["price"])
    if price["currency"] != session["currency"]:
        return _error("This item cannot be added: its currency differs from the order's.")
    session["_items"] = [*session["_items"], new_item(ctx, price, offer["quantity"], offer.get("adjustable_quantity"))]
    session["_added_optional"] = [*added, index]
    totals.recompute(ctx, session)
    ctx.save(session)
    return None


def set_shipping_rate(ctx: RequestContext, session: dict[str, Any], rate_id: object) -> dict[str, Any] | None:
    """The buyer picks one of the session's ``shipping_options`` (None on success, else the page error)."""
    chosen = next((o for o in session.get("shipping_options") or [] if o["shipping_rate"] == rate_id), None)
    if session["status"] != "open" or chosen is None:
        return _error("This shipping method is not available.", "shipping_rate")
    session["shipping_cost"] = {"amount_subtotal": chosen["shipping_amount"], "amount_tax": 0,
                                "amount_total": chosen["shipping_amount"], "shipping_rate": chosen["shipping_rate"]}
    totals.recompute(ctx, session)
    ctx.save(session)
    return None
