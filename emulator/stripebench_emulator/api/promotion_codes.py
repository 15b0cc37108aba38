"""Promotion codes, in both shapes: ``coupon: {…}`` before 2025-09-30, ``promotion: {type, coupon}`` from then on.

Stored in the newer shape (``promotion.coupon`` holds the coupon id); the renderer produces the older shape for
older API versions, and create accepts whichever parameter the request's version has.
"""

from __future__ import annotations

from typing import Any

from stripebench_emulator.model.context import LIST_PARAMS, RequestContext
from stripebench_emulator.model.errors import invalid, missing_param, unknown_param
from stripebench_emulator.model.fields import apply_metadata
from stripebench_emulator.model.params import AnyHash, Bool, Currency, Enum, Hash, Int, Metadata, Str
from stripebench_emulator.model.registry import Resource
from stripebench_emulator.model.versions import PROMOTION_CODE_POLYMORPHIC
from stripebench_emulator.rules import redemption

resource = Resource("promotion_code", prefix="promo", noun="promotion code",
                    expandable={"customer": "customer", "promotion.coupon": "coupon"},
                    # before 2025-09-30 the coupon is always embedded whole; expanding it is accepted as a no-op
                    includable={"coupon"})

RESTRICTIONS = Hash({"first_time_transaction": Bool(), "minimum_amount": Int(min=0),
                     "minimum_amount_currency": Currency(),
                     "currency_options": AnyHash(Hash({"minimum_amount": Int(min=0)}))})
CREATE = {
    "coupon": Str(),  # before 2025-09-30
    "promotion": Hash({"type": Enum("coupon", required=True), "coupon": Str()}),  # from 2025-09-30
    "code": Str(max_length=500),
    "active": Bool(),
    "customer": Str(),
    "expires_at": Int(),
    "max_redemptions": Int(min=1),
    "metadata": Metadata(),
    "restrictions": RESTRICTIONS,
}


def _polymorphic(ctx: RequestContext) -> bool:
    return ctx.version_at_least(PROMOTION_CODE_POLYMORPHIC)


def _active(ctx: RequestContext, promo: dict[str, Any]) -> bool:
    """``active`` as it renders (and so as the list's ``active`` filter and the unique-code rule see it)."""
    return redemption.render_active(ctx, promo, ctx.now())


@resource.renderer
def render(obj: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """Older versions carry the whole coupon under ``coupon``; newer ones a ``promotion`` hash with its id.
    ``active`` is Stripe's: false once the code expires, reaches ``max_redemptions`` or its coupon is no longer
    valid (``redemption.render_active``), whatever was stored."""
    obj["active"] = _active(ctx, obj)
    if _polymorphic(ctx):
        return obj
    promotion = obj.pop("promotion")
    coupon = ctx.find("coupon", promotion["coupon"])
    rendered = ctx.render(coupon) if coupon else {"id": promotion["coupon"], "object": "coupon", "deleted": True}
    ordered = {}
    for key, value in obj.items():  # keep Stripe's alphabetical order: coupon sits between code and created
        ordered[key] = value
        if key == "code":
            ordered["coupon"] = rendered
    return ordered


@resource.route("POST", "/v1/promotion_codes", params=CREATE)
def create(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create a promotion code for a coupon; ``code`` is generated when omitted and must be unique among active ones."""
    if _polymorphic(ctx):
        if "coupon" in params:
            raise unknown_param("coupon")
        if "promotion" not in params:
            raise missing_param("promotion")
        coupon_id, coupon_param = params["promotion"].get("coupon"), "promotion[coupon]"
        if not coupon_id:
            raise missing_param("promotion[coupon]")
    else:
        if "promotion" in params:
            raise unknown_param("promotion")
        if "coupon" not in params:
            raise missing_param("coupon")
        coupon_id, coupon_param = params["coupon"], "coupon"
    ctx.get("coupon", coupon_id, param=coupon_param)
    if params.get("customer"):
        ctx.get("customer", params["customer"], param="customer")
    code = params.get("code") or ctx.emulator.ids.token("promotion_code", 8).upper()
    active = params.get("active", True)
    if active and any(p["code"].lower() == code.lower() and _active(ctx, p)
                      for p in ctx.store.scan("promotion_code")):
        raise invalid(f"An active promotion code with `code: {code}` already exists.", param="code")
    restrictions = params.get("restrictions") or {}
    obj: dict[str, Any] = {
        "id": ctx.new_id("promo"), "object": "promotion_code", "active": active, "code": code, "created": ctx.now(),
        "customer": params.get("customer"), "customer_account": None, "expires_at": params.get("expires_at"),
        "livemode": False, "max_redemptions": params.get("max_redemptions"),
        "metadata": apply_metadata({}, params.get("metadata") or {}),
        "promotion": {"coupon": coupon_id, "type": "coupon"},
        "restrictions": {"currency_options": restrictions.get("currency_options") or {},
                         "first_time_transaction": restrictions.get("first_time_transaction", False),
                         "minimum_amount": restrictions.get("minimum_amount"),
                         "minimum_amount_currency": restrictions.get("minimum_amount_currency")},
        "times_redeemed": 0,
    }
    ctx.save(obj)
    ctx.emit("promotion_code.created", obj)
    return obj


@resource.route("GET", "/v1/promotion_codes/{id}")
def retrieve(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Retrieve a promotion code."""
    return ctx.get("promotion_code", id)


@resource.route("POST", "/v1/promotion_codes/{id}", params={
    "active": Bool(), "metadata": Metadata(),
    "restrictions": Hash({"currency_options": AnyHash(Hash({"minimum_amount": Int(min=0)}))})})
def update(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Update ``active``, ``metadata`` or currency restrictions (the rest is immutable on Stripe)."""
    obj = ctx.get("promotion_code", id)
    before = ctx.get("promotion_code", id)
    if params.get("active") and not obj["active"]:
        if any(p["code"].lower() == obj["code"].lower() and _active(ctx, p)
               for p in ctx.store.scan("promotion_code")):
            raise invalid(f"An active promotion code with `code: {obj['code']}` already exists.", param="active")
    if "active" in params:
        obj["active"] = params["active"]
    if "metadata" in params:
        obj["metadata"] = apply_metadata(obj["metadata"], params["metadata"])
    if "restrictions" in params:
        restrictions = obj["restrictions"]  # replaced, never changed in place
        obj["restrictions"] = {**restrictions, "currency_options": {
            **(restrictions.get("currency_options") or {}),
            **((params["restrictions"] or {}).get("currency_options") or {})}}
    ctx.save(obj)
    ctx.emit("promotion_code.updated", obj, previous=before)
    return obj


@resource.route("GET", "/v1/promotion_codes", params={**LIST_PARAMS, "active": Bool(), "code": Str(),
                                                      "coupon": Str(), "customer": Str()})
def list_promotion_codes(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """List promotion codes with ``active``, ``code`` (case-insensitive), ``coupon``, ``customer`` filters."""
    def keep(p: dict[str, Any]) -> bool:
        return all((
            "active" not in params or _active(ctx, p) == params["active"],
            "code" not in params or p["code"].lower() == params["code"].lower(),
            "coupon" not in params or p["promotion"]["coupon"] == params["coupon"],
            "customer" not in params or p["customer"] == params["customer"],
        ))

    return ctx.list_page("promotion_code", params, "/v1/promotion_codes", where=keep)
