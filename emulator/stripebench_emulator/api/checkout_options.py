"""Checkout Session settings a buyer sees and answers: custom text, consent, custom fields, tax ids, optional items,
the submit button's wording and subscription trials / billing cycle anchors.

Shared by ``checkout_sessions`` (params, validation and the shapes echoed on the session), the browser page (what
it shows) and ``checkout_completion`` (checking the buyer's answers and recording them on the completed session).
No routes of its own.
"""

from __future__ import annotations

import re
from typing import Any

from stripebench_emulator.model.context import RequestContext
from stripebench_emulator.model.errors import invalid, missing_param
from stripebench_emulator.model.params import Array, Bool, Enum, Hash, Int, Str

DAY = 24 * 3600
TEXT_BLOCKS = ("after_submit", "shipping_address", "submit", "terms_of_service_acceptance")

CUSTOM_TEXT = Hash({name: Hash({"message": Str(required=True, max_length=1200)}, emptyable=True)
                    for name in TEXT_BLOCKS})
CONSENT_COLLECTION = Hash({
    "payment_method_reuse_agreement": Hash({"position": Enum("auto", "hidden", required=True)}),
    "promotions": Enum("auto", "none"),
    "terms_of_service": Enum("none", "required"),
})
_LENGTHS = {"default_value": Str(max_length=255), "minimum_length": Int(min=0, max=255),
            "maximum_length": Int(min=1, max=255)}
CUSTOM_FIELDS = Array(Hash({
    "key": Str(required=True, max_length=200),
    "label": Hash({"type": Enum("custom", required=True), "custom": Str(required=True, max_length=50)},
                  required=True),
    "type": Enum("dropdown", "numeric", "text", required=True),
    "optional": Bool(),
    "dropdown": Hash({"options": Array(Hash({"label": Str(required=True, max_length=100),
                                             "value": Str(required=True, max_length=100)}),
                                       required=True, max_items=200),
                      "default_value": Str(max_length=100)}),
    "numeric": Hash(dict(_LENGTHS)),
    "text": Hash(dict(_LENGTHS)),
}), max_items=3)
OPTIONAL_ITEMS = Array(Hash({
    "price": Str(required=True), "quantity": Int(required=True, min=1, max=999999),
    "adjustable_quantity": Hash({"enabled": Bool(required=True), "maximum": Int(min=1, max=999999),
                                 "minimum": Int(min=0, max=999999)}),
}), max_items=10)
SUBSCRIPTION_EXTRAS = {
    "trial_period_days": Int(min=1, max=730), "trial_end": Int(),
    "trial_settings": Hash({"end_behavior": Hash({"missing_payment_method": Enum(
        "cancel", "create_invoice", "pause", required=True)}, required=True)}),
    "billing_cycle_anchor": Int(), "proration_behavior": Enum("create_prorations", "none"),
}
# Stripe's button wording for ``submit_type`` (``auto`` and unset follow the mode).
SUBMIT_LABELS = {"pay": "Pay", "book": "Book", "donate": "Donate", "subscribe": "Subscribe"}
MODE_LABELS = {"payment": "Pay", "subscription": "Subscribe", "setup": "Save"}
_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def custom_text(params: dict[str, Any]) -> dict[str, Any]:
    """``custom_text`` as the session shows it: every block, ``{message}`` or null."""
    given = params.get("custom_text") or {}
    return {name: ({"message": given[name]["message"]} if given.get(name) else None) for name in TEXT_BLOCKS}


def consent_collection(params: dict[str, Any]) -> dict[str, Any] | None:
    """``consent_collection`` as echoed (null when not asked for)."""
    given = params.get("consent_collection")
    if given is None:
        return None
    reuse = given.get("payment_method_reuse_agreement")
    return {"payment_method_reuse_agreement": {"position": reuse["position"]} if reuse else None,
            "promotions": given.get("promotions"), "terms_of_service": given.get("terms_of_service")}


def custom_fields(params: dict[str, Any]) -> list[dict[str, Any]]:
    """Validated ``custom_fields`` in Stripe's shape (``value`` null until the buyer answers)."""
    out, keys = [], set()
    for i, field in enumerate(params.get("custom_fields") or []):
        name = f"custom_fields[{i}]"
        if not _KEY.match(field["key"]):
            raise invalid("The key must be alphanumeric.", param=f"{name}[key]")
        if field["key"] in keys:
            raise invalid(f"Custom field keys must be unique; `{field['key']}` is used twice.", param=f"{name}[key]")
        keys.add(field["key"])
        kind = field["type"]
        for other in ("dropdown", "numeric", "text"):
            if other != kind and other in field:
                raise invalid(f"`{name}[{other}]` can only be set when `{name}[type]` is `{other}`.",
                              param=f"{name}[{other}]")
        entry: dict[str, Any] = {"dropdown": None, "key": field["key"],
                                 "label": {"custom": field["label"]["custom"], "type": "custom"},
                                 "numeric": None, "optional": bool(field.get("optional", False)), "text": None,
                                 "type": kind}
        if kind == "dropdown":
            if "dropdown" not in field:
                raise missing_param(f"{name}[dropdown]")
            options = field["dropdown"]["options"]
            if not options:
                raise missing_param(f"{name}[dropdown][options]")
            default = field["dropdown"].get("default_value")
            if default is not None and default not in [o["value"] for o in options]:
                raise invalid("The default value must be one of the dropdown's option values.",
                              param=f"{name}[dropdown][default_value]")
            entry["dropdown"] = {"default_value": default,
                                 "options": [{"label": o["label"], "value": o["value"]} for o in options],
                                 "value": None}
        else:
            given = field.get(kind) or {}
            low, high = given.get("minimum_length"), given.get("maximum_length")
            if low is not None and high is not None and low > high:
                raise invalid("`minimum_length` cannot be greater than `maximum_length`.",
                              param=f"{name}[{kind}][minimum_length]")
            entry[kind] = {"default_value": given.get("default_value"), "maximum_length": high,
                           "minimum_length": low, "value": None}
        out.append(entry)
    return out


def optional_items(ctx: RequestContext, params: dict[str, Any], mode: str) -> list[dict[str, Any]] | None:
    """Validated ``optional_items`` (active prices) in the session's shape; null when none are offered."""
    given = params.get("optional_items") or []
    if given and mode == "setup":
        raise invalid("`optional_items` cannot be used in `setup` mode.", param="optional_items")
    out = []
    for i, item in enumerate(given):
        price = ctx.get("price", item["price"], param=f"optional_items[{i}][price]")
        if not price["active"]:
            raise invalid("The price specified is inactive. This field only accepts active prices.",
                          param=f"optional_items[{i}][price]")
        if mode == "payment" and price["type"] == "recurring":
            raise invalid("You specified `payment` mode but passed a recurring price as an optional item.",
                          param=f"optional_items[{i}][price]")
        adjustable = item.get("adjustable_quantity")
        out.append({"adjustable_quantity": None if adjustable is None else {
            "enabled": adjustable["enabled"], "maximum": adjustable.get("maximum"),
            "minimum": adjustable.get("minimum")}, "price": price["id"], "quantity": item["quantity"]})
    return out or None


def check_submit_type(params: dict[str, Any], mode: str) -> None:
    """``submit_type`` is for payment mode (``subscribe`` also for subscription mode), never setup mode."""
    kind = params.get("submit_type")
    if kind is None or kind == "auto":
        return
    if mode == "setup" or (mode == "subscription" and kind != "subscribe"):
        raise invalid(f"`submit_type={kind}` cannot be used in `{mode}` mode.", param="submit_type")


def submit_label(session: dict[str, Any]) -> str:
    """The submit button's text Stripe shows for this session."""
    return SUBMIT_LABELS.get(session.get("submit_type") or "auto") or MODE_LABELS[session["mode"]]


def subscription_terms(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Trial and billing-cycle settings from ``subscription_data``, checked like Stripe (times on our clock)."""
    data = params.get("subscription_data") or {}
    now = ctx.now()
    if "trial_period_days" in data and "trial_end" in data:
        raise invalid("You may only specify one of these parameters: subscription_data[trial_end], "
                      "subscription_data[trial_period_days].", param="subscription_data[trial_end]")
    trial_end = data.get("trial_end")
    if trial_end is not None and trial_end < now + 2 * DAY:
        raise invalid("`subscription_data[trial_end]` must be at least 48 hours in the future.",
                      param="subscription_data[trial_end]")
    if "trial_period_days" in data:
        trial_end = now + data["trial_period_days"] * DAY
    anchor = data.get("billing_cycle_anchor")
    if anchor is not None and anchor <= now:
        raise invalid("`subscription_data[billing_cycle_anchor]` must be a timestamp in the future.",
                      param="subscription_data[billing_cycle_anchor]")
    if "proration_behavior" in data and anchor is None:
        raise invalid("`subscription_data[proration_behavior]` can only be set together with "
                      "`subscription_data[billing_cycle_anchor]`.", param="subscription_data[proration_behavior]")
    if anchor is not None and trial_end is not None and anchor < trial_end:
        raise invalid("`subscription_data[billing_cycle_anchor]` cannot be before the trial ends.",
                      param="subscription_data[billing_cycle_anchor]")
    return {"trial_end": trial_end, "trial_period_days": data.get("trial_period_days"),
            "billing_cycle_anchor": anchor, "proration_behavior": data.get("proration_behavior", "create_prorations"),
            "trial_settings": data.get("trial_settings")}


def recurring_share(terms: dict[str, Any], now: int, period_end: int) -> float:
    """How much of a recurring price is due today: 0 in a trial, a proration up to a billing cycle anchor."""
    if terms.get("trial_end"):
        return 0.0
    anchor = terms.get("billing_cycle_anchor")
    if anchor is None:
        return 1.0
    if terms.get("proration_behavior") == "none":
        return 0.0
    return min(1.0, max(0.0, (anchor - now) / max(period_end - now, 1)))


def validate_answers(session: dict[str, Any], form: dict[str, Any]) -> tuple[str, str] | None:
    """(message, field) for the first consent or custom field the buyer still has to answer, or None."""
    consent = session.get("consent_collection") or {}
    for field in session.get("custom_fields") or []:
        name = "custom_field_" + field["key"]
        value = (form.get(name) or "").strip()
        label = field["label"]["custom"]
        if not value:
            if not field["optional"]:
                return f"{label} is required.", name
            continue
        if field["type"] == "dropdown":
            if value not in [o["value"] for o in field["dropdown"]["options"]]:
                return f"Choose one of the options for {label}.", name
            continue
        rules = field[field["type"]]
        if field["type"] == "numeric" and not value.isdigit():
            return f"{label} must contain only digits.", name
        if rules.get("minimum_length") and len(value) < rules["minimum_length"]:
            return f"{label} must be at least {rules['minimum_length']} characters.", name
        if rules.get("maximum_length") and len(value) > rules["maximum_length"]:
            return f"{label} must be at most {rules['maximum_length']} characters.", name
    if (session.get("tax_id_collection") or {}).get("required") == "if_supported" \
            and not (form.get("tax_id") or "").strip():
        return "Your tax ID is required.", "tax_id"
    if consent.get("terms_of_service") == "required" and form.get("terms_of_service") != "on":
        return "You must agree to the terms of service to continue.", "terms_of_service"
    return None


def record_answers(session: dict[str, Any], form: dict[str, Any]) -> dict[str, Any]:
    """Write the buyer's answers onto the session (custom field values, consent); returns extra customer details."""
    if session.get("custom_fields"):  # the answers replace the fields (a saved session keeps its own)
        session["custom_fields"] = [
            {**field, field["type"]: {**field[field["type"]],
                                      "value": (form.get("custom_field_" + field["key"]) or "").strip() or None}}
            for field in session["custom_fields"]]
    consent = session.get("consent_collection")
    if consent and (consent.get("promotions") == "auto" or consent.get("terms_of_service") == "required"):
        session["consent"] = {
            "promotions": ("opt_in" if form.get("promotions") == "on" else "opt_out")
            if consent.get("promotions") == "auto" else None,
            "terms_of_service": "accepted" if consent.get("terms_of_service") == "required" else None}
    extra: dict[str, Any] = {}
    if (session.get("tax_id_collection") or {}).get("enabled"):
        tax_id = (form.get("tax_id") or "").strip()
        extra["tax_ids"] = [{"type": "unknown", "value": tax_id}] if tax_id else []
        extra["business_name"] = (form.get("business_name") or "").strip() or None
    return extra
