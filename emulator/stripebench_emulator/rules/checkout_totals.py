"""Checkout Session money: line item amounts, one coupon or promotion code, ``total_details``, line item pages.

Shared by the API (``checkout_sessions``), the browser pages (applying a promotion code) and completion (which
redeems the discount and bills the subscription's first invoice with the same numbers).
"""

from __future__ import annotations

from typing import Any

from stripebench_emulator.model.context import RequestContext
from stripebench_emulator.model.errors import StripeError, invalid
from stripebench_emulator.model.versions import PROMOTION_CODE_POLYMORPHIC
from stripebench_emulator.rules import redemption


def find_promotion_code(ctx: RequestContext, code: str) -> dict[str, Any] | None:
    """The active promotion code a customer typed (case-insensitive), or None."""
    for promo in ctx.store.scan("promotion_code"):
        if promo["active"] and promo["code"].lower() == code.strip().lower():
            return promo
    return None


def _currency_problem(coupon: dict[str, Any], currency: str | None) -> str | None:
    if coupon.get("amount_off") is not None and currency and coupon["currency"] != currency \
            and currency not in (coupon.get("_currency_options") or {}):
        return f"This coupon's currency ({coupon['currency']}) does not match the session's currency ({currency})."
    return None


def promotion_problem(ctx: RequestContext, session: dict[str, Any], promo: dict[str, Any]) -> str | None:
    """Why ``promo`` cannot apply to ``session`` (None when it can): ``redemption``'s checks, then the currency."""
    problem = redemption.page_problem(ctx, promo, customer_id=session.get("customer"), amount=subtotal(session),
                                      currency=session.get("currency"))
    if problem:
        return problem
    return _currency_problem(ctx.get("coupon", promo["promotion"]["coupon"]), session.get("currency"))


def attach_discount(ctx: RequestContext, session: dict[str, Any], discount: dict[str, Any], param: str) -> None:
    """Attach ``{coupon}`` or ``{promotion_code}`` (checked by ``redemption``, counted when the session completes)
    to the session's ``discounts``."""
    if discount.get("coupon") and discount.get("promotion_code"):
        raise invalid(f"You may only specify one of these parameters: {param}[coupon], {param}[promotion_code].",
                      param=f"{param}[coupon]")
    if not discount.get("coupon") and not discount.get("promotion_code"):
        raise invalid(f"You must specify either `coupon` or `promotion_code` in {param}.", param=param)
    coupon, promo, name = redemption.check(ctx, discount, param, customer_id=session.get("customer"),
                                           amount=subtotal(session), currency=session.get("currency"))
    problem = _currency_problem(coupon, session.get("currency"))
    if problem:
        raise invalid(problem, param=name)
    session["discounts"] = [{"coupon": None if promo else coupon["id"], "promotion_code": (promo or {}).get("id")}]


def session_coupon(ctx: RequestContext, session: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """(coupon, promotion code id) of the session's discount, or (None, None)."""
    for entry in session.get("discounts") or []:
        if entry.get("promotion_code"):
            promo = ctx.find("promotion_code", entry["promotion_code"])
            if promo:
                return ctx.find("coupon", promo["promotion"]["coupon"]), promo["id"]
        if entry.get("coupon"):
            return ctx.find("coupon", entry["coupon"]), None
    return None, None


def subtotal(session: dict[str, Any]) -> int:
    """Sum of unit amount × quantity over the line items."""
    return sum(item["_unit_amount"] * item["quantity"] for item in session["_items"])


def recompute(ctx: RequestContext, session: dict[str, Any]) -> None:
    """Set every line item's amounts and the session's subtotal, total and ``total_details``."""
    items = session["_items"] = [dict(item) for item in session["_items"]]  # a saved session keeps its own
    if session["mode"] == "setup":
        session["amount_subtotal"] = session["amount_total"] = None
        session["total_details"] = None
        return
    coupon, promo_id = session_coupon(ctx, session)
    share = session.get("_recurring_share", 1.0)  # a trial or a billing cycle anchor: less is due today
    for item in items:
        item["amount_subtotal"] = item["_unit_amount"] * item["quantity"]
        if item["_recurring"] and share != 1.0:
            item["amount_subtotal"] = round(item["amount_subtotal"] * share)
        item["amount_discount"], item["_discounts"] = 0, []
    if coupon is not None:
        products = ((coupon.get("_applies_to") or {}).get("products")) or None
        eligible = [i for i in items if products is None or i["_product"] in products]
        base = sum(i["amount_subtotal"] for i in eligible)
        if coupon.get("percent_off") is not None:
            off = [round(i["amount_subtotal"] * float(coupon["percent_off"]) / 100) for i in eligible]
        else:
            amount = coupon["amount_off"]
            if coupon["currency"] != session["currency"]:
                amount = (coupon.get("_currency_options") or {}).get(session["currency"], {}).get("amount_off", 0)
            total_off = min(amount, base)
            off = [total_off * i["amount_subtotal"] // base if base else 0 for i in eligible]
            if eligible:
                off[-1] += total_off - sum(off)
        for item, amount in zip(eligible, off, strict=True):
            item["amount_discount"] = amount
            item["_discounts"] = [{"amount": amount, "coupon": coupon["id"], "promotion_code": promo_id}]
    for item in items:
        item["amount_total"] = item["amount_subtotal"] - item["amount_discount"]
    session["amount_subtotal"] = sum(i["amount_subtotal"] for i in items)
    discount = sum(i["amount_discount"] for i in items)
    shipping = (session.get("shipping_cost") or {}).get("amount_total") or 0
    session["amount_total"] = session["amount_subtotal"] - discount + shipping
    session["total_details"] = {"amount_discount": discount, "amount_shipping": shipping, "amount_tax": 0}


def discount_object(ctx: RequestContext, session: dict[str, Any], coupon_id: str, promo_id: str | None,
                    **links: Any) -> dict[str, Any]:
    """A ``discount`` object in the request version's shape (``source.coupon`` from 2025-09-30)."""
    obj: dict[str, Any] = {"id": f"di_{session['id'][-24:]}", "object": "discount",
                           "checkout_session": session["id"], "customer": session.get("customer"),
                           "customer_account": None, "end": None, "invoice": None, "invoice_item": None,
                           "promotion_code": promo_id, "start": session["created"], "subscription": None,
                           "subscription_item": None}
    obj.update(links)
    if ctx.version_at_least(PROMOTION_CODE_POLYMORPHIC):
        obj["source"] = {"coupon": coupon_id, "type": "coupon"}
    else:
        coupon = ctx.find("coupon", coupon_id)
        obj["coupon"] = ctx.render(coupon) if coupon else None
    return dict(sorted(obj.items()))


def items_page(session: dict[str, Any], ctx: RequestContext, url: str, params: dict[str, Any]) -> dict[str, Any]:
    """A list page of the session's line items, in the order they were given."""
    rendered = []
    for item in session["_items"]:
        item = dict(item)
        item["_discounts"] = [{"amount": d["amount"], "discount": discount_object(ctx, session, d["coupon"],
                                                                                    d["promotion_code"])}
                              for d in item["_discounts"]]
        rendered.append(item)
    # list_page sorts nothing itself: it pages the rows it is given (newest-first for stored kinds).
    return ctx.list_page("item", {k: v for k, v in params.items() if k != "created"}, url, items=rendered)


def require_open(session: dict[str, Any]) -> None:
    """Stripe's error for acting on a session that is no longer open."""
    if session["status"] != "open":
        raise StripeError(f"This Checkout Session is no longer active (status: {session['status']}).")
