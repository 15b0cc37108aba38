"""Redeeming coupons and promotion codes: one check and one count for every place a discount is applied.

Subscriptions (``billing_changes.discounts_from``), customers (``billing_discounts.apply_to_customer``), invoices and
invoice items (``invoice_discounts``) and Checkout Sessions (``checkout_totals`` when one is attached or typed on the page,
``checkout_completion`` when it completes) all call :func:`check` before applying a coupon or promotion code and
:func:`record` once it is applied, so the same code is refused or counted the same way on each.

What :func:`check` refuses, at the time of the clock the customer is on (a test clock's frozen time, else the
emulator's):

- a coupon past ``redeem_by`` or at ``max_redemptions`` (Stripe shows it ``valid: false``):
  ``coupon_expired``, "Coupon expired: <id>";
- a promotion code turned off, past ``expires_at``, at its ``max_redemptions`` or whose coupon is no longer valid
  (Stripe then shows it ``active: false``, see ``render_active``);
- a promotion code for another customer (``customer``), or with ``restrictions.first_time_transaction`` for a
  customer with a prior successful payment (a succeeded charge) or a paid invoice;
- a promotion code whose ``minimum_amount`` (in ``minimum_amount_currency``, or ``currency_options[<cur>]``) the
  amount being discounted does not reach, when the caller knows that amount (subscriptions, invoice items,
  Checkout; a customer's discount and an invoice-level one have no amount yet when they are applied).

Each error names the param the caller passed (``discounts[0][promotion_code]``, ``promotion_code``, ``coupon``…).
:func:`record` replaces the stored coupon and promotion code with ``times_redeemed`` one higher (never changing
them in place); the request's transaction undoes it when the request fails later.
"""

from __future__ import annotations

from typing import Any

from stripebench_emulator.model.context import RequestContext
from stripebench_emulator.model.errors import StripeError, invalid
from stripebench_emulator.rules import billing_time

FIRST_TIME = "This promotion code cannot be redeemed because the associated customer has prior transactions."


def customer_now(ctx: RequestContext, customer_id: str | None) -> int:
    """The time on the customer's test clock, else the request's time."""
    customer = ctx.find("customer", customer_id) if customer_id else None
    clock = (customer or {}).get("test_clock")
    return billing_time.clock_now(ctx, clock) if clock else ctx.now()


def coupon_valid(coupon: dict[str, Any], now: int) -> bool:
    """Whether a coupon can still be redeemed at ``now`` (its ``valid``)."""
    expired = coupon.get("redeem_by") is not None and now >= coupon["redeem_by"]
    used_up = coupon.get("max_redemptions") is not None and coupon["times_redeemed"] >= coupon["max_redemptions"]
    return not (expired or used_up)


def render_active(ctx: RequestContext, promo: dict[str, Any], now: int) -> bool:
    """A promotion code's ``active`` as Stripe shows it: on, not expired, redemptions left and its coupon valid."""
    if not promo["active"] or _own_limit(promo, now):
        return False
    coupon = ctx.find("coupon", promo["promotion"]["coupon"])
    return coupon is not None and coupon_valid(coupon, now)


def has_prior_transactions(ctx: RequestContext, customer_id: str) -> bool:
    """A succeeded charge or a paid invoice for the customer (``first_time_transaction``'s test)."""
    if any(c.get("customer") == customer_id and c.get("status") == "succeeded" for c in ctx.store.scan("charge")):
        return True
    return any(i.get("customer") == customer_id and i.get("status") == "paid" for i in ctx.store.scan("invoice"))


def minimum_for(promo: dict[str, Any], currency: str | None) -> int | None:
    """The promotion code's minimum amount in ``currency`` (None when it sets none there)."""
    restrictions = promo.get("restrictions") or {}
    if currency is None:
        return None
    if restrictions.get("minimum_amount") is not None and restrictions.get("minimum_amount_currency") == currency:
        return restrictions["minimum_amount"]
    option = (restrictions.get("currency_options") or {}).get(currency) or {}
    return option.get("minimum_amount")


def _money(amount: int, currency: str) -> str:
    return f"{amount / 100:.2f} {currency.upper()}"


def check_coupon(ctx: RequestContext, coupon_id: str, param: str, *, now: int) -> dict[str, Any]:
    """The stored coupon, refused with ``coupon_expired`` when it cannot be redeemed at ``now``."""
    coupon = ctx.get("coupon", coupon_id, param=param)
    if not coupon_valid(coupon, now):
        raise invalid(f"Coupon expired: {coupon_id}", param=param, code="coupon_expired")
    return coupon


def check_promotion_code(ctx: RequestContext, promo_id: str, param: str, *, customer_id: str | None, now: int,
                         amount: int | None = None, currency: str | None = None) -> dict[str, Any]:
    """The stored promotion code, refused (Stripe's error, ``param``) when it cannot be redeemed here."""
    promo = ctx.get("promotion_code", promo_id, param=param)
    if not render_active(ctx, promo, now):
        coupon = ctx.find("coupon", promo["promotion"]["coupon"])
        if promo["active"] and coupon is not None and not coupon_valid(coupon, now) and not _own_limit(promo, now):
            raise invalid(f"Coupon expired: {coupon['id']}", param=param, code="coupon_expired")
        raise invalid(f"This promotion code is not active: {promo['code']}", param=param)
    if promo.get("customer") and promo["customer"] != customer_id:
        raise invalid(f"This promotion code cannot be redeemed by this customer: {promo['code']}", param=param)
    if (promo.get("restrictions") or {}).get("first_time_transaction") and customer_id \
            and has_prior_transactions(ctx, customer_id):
        raise invalid(FIRST_TIME, param=param)
    minimum = minimum_for(promo, currency)
    if minimum is not None and amount is not None and currency is not None and amount < minimum:
        raise invalid(f"This promotion code cannot be redeemed because the amount is less than its minimum amount "
                      f"of {_money(minimum, currency)}.", param=param)
    return promo


def _own_limit(promo: dict[str, Any], now: int) -> bool:
    """Whether the promotion code itself (not its coupon) has expired or is used up at ``now``."""
    expired = promo.get("expires_at") is not None and now >= promo["expires_at"]
    used_up = promo.get("max_redemptions") is not None and promo["times_redeemed"] >= promo["max_redemptions"]
    return expired or used_up


def check(ctx: RequestContext, spec: dict[str, Any], param: str, *, customer_id: str | None,
          amount: int | None = None, currency: str | None = None, now: int | None = None
          ) -> tuple[dict[str, Any], dict[str, Any] | None, str]:
    """Check the ``{coupon}`` or ``{promotion_code}`` of one ``discounts[]`` entry (``param`` is the entry's own
    name, e.g. ``discounts[0]``; ``""`` for top-level ``coupon`` / ``promotion_code`` params). Answers (coupon,
    promotion code or None, the param that named it)."""
    at = customer_now(ctx, customer_id) if now is None else now
    prefix = f"{param}[{{}}]" if param else "{}"
    if spec.get("promotion_code"):
        name = prefix.format("promotion_code")
        promo = check_promotion_code(ctx, spec["promotion_code"], name, customer_id=customer_id, now=at,
                                     amount=amount, currency=currency)
        return check_coupon(ctx, promo["promotion"]["coupon"], name, now=at), promo, name
    name = prefix.format("coupon")
    if not spec.get("coupon"):
        raise invalid(f"Missing required param: {name}.", param=name, code="parameter_missing")
    return check_coupon(ctx, spec["coupon"], name, now=at), None, name


def record(ctx: RequestContext, coupon_id: str | None, promo_id: str | None) -> None:
    """Count one redemption on the coupon and on the promotion code (stored objects replaced, not changed)."""
    for kind, obj_id in (("coupon", coupon_id), ("promotion_code", promo_id)):
        if obj_id:
            stored = ctx.find(kind, obj_id)
            if stored is not None:
                ctx.save({**stored, "times_redeemed": stored["times_redeemed"] + 1})


def page_problem(ctx: RequestContext, promo: dict[str, Any], *, customer_id: str | None, amount: int | None,
                 currency: str | None) -> str | None:
    """The message :func:`check` would refuse a typed promotion code with (None when it can be redeemed)."""
    try:
        check(ctx, {"promotion_code": promo["id"]}, "", customer_id=customer_id, amount=amount, currency=currency)
    except StripeError as err:
        return err.message
    return None
