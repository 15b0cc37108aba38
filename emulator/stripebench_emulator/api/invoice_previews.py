"""Invoice previews: ``POST /v1/invoices/create_preview`` and, before 2025-03-31, ``GET /v1/invoices/upcoming``.

A preview is the invoice a subscription would get next — its renewal, or with ``subscription_details`` (or the
older ``subscription_items`` / ``subscription_proration_*`` params) the invoice the change would make, proration lines
included — computed on a copy, so nothing is saved and no event is sent. Basil (2025-03-31) removed ``upcoming``.
"""

from __future__ import annotations

from typing import Any

from stripebench_emulator.model.context import RequestContext
from stripebench_emulator.model.errors import StripeError, invalid
from stripebench_emulator.model.params import Array, Bool, Hash, Int, Str
from stripebench_emulator.model.registry import RESOURCES
from stripebench_emulator.model.versions import SUBSCRIPTION_PERIOD_ON_ITEMS
from stripebench_emulator.rules import billing_changes as changes
from stripebench_emulator.rules.billing_preview import preview

DETAILS = Hash({"items": Array(changes.UPDATE_ITEM), "proration_behavior": changes.PRORATION,
                "proration_date": Int(), "billing_cycle_anchor": Str(), "cancel_at": Int(emptyable=True),
                "cancel_at_period_end": Bool(), "cancel_now": Bool(), "trial_end": Str(),
                "default_tax_rates": Array(Str(), emptyable=True)})
PREVIEW = {"customer": Str(), "subscription": Str(), "subscription_details": DETAILS, "schedule": Str(),
           "discounts": changes.DISCOUNTS, "currency": Str(), "invoice_items": Array(Hash({}, emptyable=True)),
           "automatic_tax": Hash({"enabled": Bool(required=True)}), "preview_mode": Str()}
UPCOMING = {"customer": Str(), "subscription": Str(), "subscription_items": Array(changes.UPDATE_ITEM),
            "subscription_proration_behavior": changes.PRORATION, "subscription_proration_date": Int(),
            "subscription_trial_end": Str(), "subscription_billing_cycle_anchor": Str(), "coupon": Str(),
            "schedule": Str()}


def _subscription(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    if params.get("subscription"):
        sub = ctx.get("subscription", params["subscription"], param="subscription")
    elif params.get("schedule"):
        sched = ctx.get("subscription_schedule", params["schedule"], param="schedule")
        sub = ctx.get("subscription", sched["subscription"] or "", param="schedule")
    elif params.get("customer"):
        ctx.get("customer", params["customer"], param="customer")
        subs = [s for s in ctx.store.scan("subscription") if s["customer"] == params["customer"]
                and s["status"] not in ("canceled", "incomplete_expired")]
        if not subs:
            raise StripeError(f"No upcoming invoices for customer: {params['customer']}", status=404,
                              code="invoice_upcoming_none")
        sub = ctx.get("subscription", subs[0]["id"])
    else:
        raise invalid("Missing required param: customer or subscription.", param="customer",
                      code="parameter_missing")
    if params.get("customer") and sub["customer"] != params["customer"]:
        raise invalid("The subscription does not belong to this customer.", param="subscription")
    if sub["status"] == "canceled":
        raise StripeError(f"No upcoming invoices for customer: {sub['customer']}", status=404,
                          code="invoice_upcoming_none")
    return sub


def _change_from_details(details: dict[str, Any]) -> dict[str, Any]:
    change: dict[str, Any] = {k: details[k] for k in ("items", "proration_behavior", "proration_date", "trial_end",
                                      "default_tax_rates") if k in details}
    if details.get("billing_cycle_anchor") == "now":
        change["billing_cycle_anchor"] = "now"
    return change


_invoice = RESOURCES["invoice"]


@_invoice.route("POST", "/v1/invoices/create_preview", params=PREVIEW)
def create_preview(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Preview the next invoice of a subscription, with a proposed change applied."""
    sub = _subscription(ctx, params)
    return preview(ctx, sub, _change_from_details(params.get("subscription_details") or {}))


@_invoice.route("GET", "/v1/invoices/upcoming", params=UPCOMING)
def upcoming(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """The legacy upcoming invoice (gone from 2025-03-31.basil on, as on Stripe)."""
    if ctx.version_at_least(SUBSCRIPTION_PERIOD_ON_ITEMS):
        raise StripeError("The Upcoming Invoice API has been removed in API version 2025-03-31.basil. Use the "
                          "Create Preview Invoice API (POST /v1/invoices/create_preview) instead.", status=400)
    sub = _subscription(ctx, params)
    change = {"items": params["subscription_items"]} if "subscription_items" in params else {}
    for old, new in (("subscription_proration_behavior", "proration_behavior"),
                     ("subscription_proration_date", "proration_date"), ("subscription_trial_end", "trial_end")):
        if old in params:
            change[new] = params[old]
    if params.get("subscription_billing_cycle_anchor") == "now":
        change["billing_cycle_anchor"] = "now"
    return preview(ctx, sub, change)
