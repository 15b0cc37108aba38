"""Invoices: create / update / delete drafts, retrieve, list, search, lines; Checkout's and renewals' paid invoices.

Lines are stored inside the invoice (``_lines``, see ``invoice_lines``), payments under ``_payments`` (see
``invoice_payments``); the lifecycle actions (finalize, pay, void, …) live in ``invoice_actions``. From 2025-03-31
an invoice has no ``payment_intent``/``subscription`` fields (payments moved under ``payments``, the subscription
under ``parent``); before, they sit at the top level. Discounts (the ``discounts`` param, inheriting the customer's)
are ``invoice_discounts``'s.

Internal API: ``new_invoice(ctx, customer_id, currency, …) -> draft`` (saved, ``invoice.created`` emitted),
``recompute(invoice)`` (discount amounts, totals from lines and payments), ``create_paid_invoice(...)`` (finalized
and paid at once).
"""

from __future__ import annotations

from typing import Any

from stripebench_emulator.api import invoice_discounts, invoice_items
from stripebench_emulator.api.invoice_lines import lines_page, render_line
from stripebench_emulator.api.invoice_payments import payments_page
from stripebench_emulator.model.context import LIST_PARAMS, RequestContext
from stripebench_emulator.model.errors import StripeError, invalid, missing_param
from stripebench_emulator.model.fields import apply_metadata, deleted_stub
from stripebench_emulator.model.params import Array, Bool, Currency, Enum, Hash, Int, Metadata, Param, Str
from stripebench_emulator.model.registry import Resource
from stripebench_emulator.model.search import SEARCH_PARAMS, search_page
from stripebench_emulator.model.versions import SUBSCRIPTION_PERIOD_ON_ITEMS, at_least
from stripebench_emulator.rules import billing_tax, invoice_lifecycle, methods
from stripebench_emulator.rules.invoicing import new_invoice, recompute

resource = Resource("invoice", prefix="in", noun="invoice",
                    expandable={"customer": "customer", "subscription": "subscription",
                                "payment_intent": "payment_intent", "default_payment_method": "payment_method",
                                "parent.subscription_details.subscription": "subscription",
                                "discounts": "discount", "total_discount_amounts.discount": "discount",
                                "lines.data.discounts": "discount",
                                "lines.data.discount_amounts.discount": "discount"},
                    includable={"payments", "confirmation_secret"})
# From 2025-03-31 a line names its price by id under pricing.price_details (expandable, as the sdk-upgrades-ruby
# solution asks with lines.data.pricing.price_details.price); before, the whole price is on the line.
line_resource = Resource("line_item", prefix="il", noun="invoice line item",
                         expandable={"discounts": "discount", "discount_amounts.discount": "discount",
                                     "pricing.price_details.price": "price"})
line_resource.renderer(render_line)

# Before 2022-08-01 a new invoice swept up the customer's pending invoice items by default.
PENDING_ITEMS_EXCLUDED_BY_DEFAULT = "2022-08-01"
COLLECTION = Enum("charge_automatically", "send_invoice")
# What ``payment_settings[payment_method_types][]`` accepts (the types an invoice's PaymentIntent can offer).
PAYMENT_METHOD_TYPES = (
    "ach_credit_transfer", "ach_debit", "acss_debit", "affirm", "alipay", "amazon_pay", "au_becs_debit", "bacs_debit",
    "bancontact", "billie", "blik", "boleto", "card", "cashapp", "crypto", "custom", "customer_balance", "eps", "fpx",
    "giropay", "grabpay", "ideal", "jp_credit_transfer", "kakao_pay", "klarna", "konbini", "kr_card", "link",
    "mb_way", "multibanco", "naver_pay", "nz_bank_account", "p24", "pay_by_bank", "payco", "paynow", "paypal", "payto",
    "pix", "promptpay", "revolut_pay", "satispay", "sepa_credit_transfer", "sepa_debit", "sequra", "sofort", "swish",
    "twint", "upi", "us_bank_account", "wechat_pay")
_VERIFICATION = Enum("automatic", "instant", "microdeposits")
# ``payment_settings[payment_method_options]``: one sub-hash per payment method type, stored and rendered (the
# emulator's PaymentIntents do not act on them). Each renders with these defaults under what was passed.
PAYMENT_METHOD_OPTIONS: dict[str, tuple[Param, dict[str, Any]]] = {
    "acss_debit": (Hash({"mandate_options": Hash({"transaction_type": Enum("business", "personal")}),
                         "verification_method": _VERIFICATION}, emptyable=True), {}),
    "bancontact": (Hash({"preferred_language": Enum("de", "en", "fr", "nl")}, emptyable=True),
                   {"preferred_language": "en"}),
    "card": (Hash({"installments": Hash({"enabled": Bool(), "plan": Hash({
        "count": Int(min=1), "interval": Enum("month"), "type": Enum("bonus", "fixed_count", "revolving")},
        emptyable=True)}), "request_three_d_secure": Enum("any", "automatic", "challenge")}, emptyable=True),
        {"request_three_d_secure": None}),
    "customer_balance": (Hash({"bank_transfer": Hash({
        "eu_bank_transfer": Hash({"country": Str(required=True)}),
        "type": Enum("eu_bank_transfer", "gb_bank_transfer", "jp_bank_transfer", "mx_bank_transfer",
                     "us_bank_transfer")}), "funding_type": Enum("bank_transfer")}, emptyable=True),
        {"funding_type": None}),
    "konbini": (Hash({}, emptyable=True), {}),
    "payto": (Hash({"mandate_options": Hash({"amount": Int(min=0), "purpose": Str()})}, emptyable=True), {}),
    "pix": (Hash({"amount_includes_iof": Enum("always", "never")}, emptyable=True), {"amount_includes_iof": None}),
    "sepa_debit": (Hash({}, emptyable=True), {}),
    "upi": (Hash({"mandate_options": Hash({"amount": Int(min=0), "amount_type": Enum("fixed", "maximum"),
                                           "description": Str(), "end_date": Int()})}, emptyable=True), {}),
    "us_bank_account": (Hash({"financial_connections": Hash({
        "filters": Hash({"account_subcategories": Array(Enum("checking", "savings"))}),
        "permissions": Array(Enum("balances", "ownership", "payment_method", "transactions")),
        "prefetch": Array(Enum("balances", "ownership", "transactions"))}),
        "verification_method": _VERIFICATION}, emptyable=True), {}),
}
# The two parts of ``payment_settings`` a subscription passes on to the invoices it makes (see subscriptions.py).
PAYMENT_METHOD_OPTIONS_PARAM = Hash({name: spec for name, (spec, _) in PAYMENT_METHOD_OPTIONS.items()},
                                    emptyable=True)
PAYMENT_METHOD_TYPES_PARAM = Array(Enum(*PAYMENT_METHOD_TYPES), emptyable=True)
PAYMENT_SETTINGS = Hash({
    "default_mandate": Str(emptyable=True),
    "payment_method_options": PAYMENT_METHOD_OPTIONS_PARAM,
    "payment_method_types": PAYMENT_METHOD_TYPES_PARAM,
})
FIELDS: dict[str, Param] = {
    "auto_advance": Bool(), "collection_method": COLLECTION, "days_until_due": Int(min=0, max=1825),
    "default_payment_method": Str(emptyable=True), "default_tax_rates": Array(Str(), emptyable=True),
    "description": Str(emptyable=True, max_length=1500),
    "due_date": Int(min=0, emptyable=True), "footer": Str(emptyable=True), "metadata": Metadata(),
    "payment_settings": PAYMENT_SETTINGS, "statement_descriptor": Str(emptyable=True, max_length=22),
}
# What a finalized invoice still lets you change (the rest is fixed once it has a number: Stripe's update reference
# names monetary values and collection_method; payment settings say how the open invoice is paid, so they stay).
_OPEN_EDITABLE = {"auto_advance", "description", "footer", "metadata", "default_payment_method", "due_date",
                  "payment_settings"}


@resource.renderer
def render(obj: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """Lines as a list; ``subscription``/``payment_intent`` at the top level only for pre-2025-03-31 versions, and
    the tax fields of the version (``total_taxes`` from then on, ``tax``/``total_tax_amounts`` before)."""
    obj["lines"] = lines_page(obj, ctx)
    obj["default_tax_rates"] = billing_tax.current(ctx, obj.get("default_tax_rates"))
    wanted = [path for path in ctx.expand_paths if path.split(".")[0] in ("payments", "confirmation_secret")
              or ".payments" in path or ".confirmation_secret" in path]
    if wanted and not ctx.version_at_least(SUBSCRIPTION_PERIOD_ON_ITEMS):  # both came with 2025-03-31
        raise invalid(f"This property cannot be expanded ({wanted[0]}).", param="expand")
    if any(path.split(".")[0] == "payments" or ".payments" in path for path in wanted):
        obj["payments"] = ctx.render(payments_page(obj))
    if any(path.split(".")[-1] == "confirmation_secret" for path in wanted):
        obj["confirmation_secret"] = _confirmation_secret(obj, ctx)
    if not ctx.version_at_least(SUBSCRIPTION_PERIOD_ON_ITEMS):
        obj["subscription"] = obj["_subscription"]
        obj["payment_intent"] = obj["_payment_intent"]
        obj["paid"] = obj["status"] == "paid"  # both moved to the invoice's payments on 2025-03-31
        obj["paid_out_of_band"] = bool(obj.get("_paid_out_of_band"))
        obj.pop("parent", None)
        obj.update(billing_tax.legacy_invoice_fields(obj))
        obj.pop("total_taxes", None)  # came with 2025-03-31, replacing total_tax_amounts
    if obj.get("_upcoming_event"):  # "the received Invoice object will not have an invoice ID" (invoice.upcoming)
        del obj["id"]
    return dict(sorted(obj.items()))


def _confirmation_secret(invoice: dict[str, Any], ctx: RequestContext) -> dict[str, Any] | None:
    """The client_secret of the PaymentIntent finalising made (the default payment's), for stripe.js; null without."""
    default = next((p for p in invoice.get("_payments") or [] if p["is_default"]), None)
    pi = ctx.store.get("payment_intent", default["payment_intent"]) if default else None
    return {"client_secret": pi["client_secret"], "type": "payment_intent"} if pi else None


def _apply(ctx: RequestContext, obj: dict[str, Any], params: dict[str, Any]) -> None:
    if "default_payment_method" in params and params["default_payment_method"]:
        params = {**params, "default_payment_method": methods.resolve(
            ctx, params["default_payment_method"], param="default_payment_method")["id"]}
    for key in ("auto_advance", "collection_method", "description", "due_date", "footer", "statement_descriptor",
                "default_payment_method"):
        if key in params:
            obj[key] = params[key]
    if "metadata" in params:
        obj["metadata"] = apply_metadata(obj.get("metadata"), params["metadata"])
    if "payment_settings" in params:
        obj["payment_settings"] = apply_payment_settings(obj["payment_settings"], params["payment_settings"])
    if "default_tax_rates" in params:  # lines without tax rates of their own take these
        obj["default_tax_rates"] = billing_tax.rates_from(ctx, params["default_tax_rates"], "default_tax_rates")
        recompute(obj)
    if "days_until_due" in params:
        obj["due_date"] = ctx.now() + params["days_until_due"] * 86400
    if obj["collection_method"] == "send_invoice" and obj["due_date"] is None:
        raise invalid("Invoices with collection_method=send_invoice must have a due_date or days_until_due.",
                      param="days_until_due")
    if obj["collection_method"] == "charge_automatically" and ("days_until_due" in params or params.get("due_date")):
        raise invalid("Invoices with collection_method=charge_automatically cannot have a due date.",
                      param="days_until_due" if "days_until_due" in params else "due_date")


def apply_payment_settings(current: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """``payment_settings`` (an invoice's or a subscription's) with ``given`` (cleaned params) applied: each key
    passed replaces the stored one (``""`` unsets it); passed payment method options render in Stripe's shape, the
    other types null."""
    settings = dict(current)
    for key in ("default_mandate", "payment_method_types"):
        if key in given:
            settings[key] = given[key]
    if "payment_method_options" in given:
        options = given["payment_method_options"]
        if options is None:
            settings["payment_method_options"] = None
        else:
            merged = dict(settings["payment_method_options"] or dict.fromkeys(PAYMENT_METHOD_OPTIONS))
            for name, value in options.items():
                merged[name] = None if value is None else {**PAYMENT_METHOD_OPTIONS[name][1], **value}
            settings["payment_method_options"] = merged
    return settings


@resource.route("POST", "/v1/invoices", params={
    **FIELDS, "customer": Str(), "currency": Currency(), "subscription": Str(),
    "discounts": invoice_discounts.DISCOUNTS,
    "pending_invoice_items_behavior": Enum("exclude", "include")})
def create(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create a draft invoice; pending invoice items join it with ``pending_invoice_items_behavior=include``."""
    if not params.get("customer"):
        raise missing_param("customer")
    customer = ctx.get("customer", params["customer"], param="customer")
    subscription = ctx.get("subscription", params["subscription"], param="subscription") \
        if params.get("subscription") else None
    default_behavior = "exclude" if at_least(ctx.api_version, PENDING_ITEMS_EXCLUDED_BY_DEFAULT) else "include"
    behavior = params.get("pending_invoice_items_behavior", default_behavior)
    pending = [i for i in ctx.store.scan("invoiceitem") if i["customer"] == customer["id"] and not i.get("invoice")
               and not i.get("deleted") and (params.get("currency") is None or i["currency"] == params["currency"])]
    currency = params.get("currency") or customer.get("currency") or (pending[0]["currency"] if pending else "usd")
    obj = new_invoice(ctx, customer["id"], currency, subscription=subscription,
                      billing_reason="subscription" if subscription else "manual", emit=False)
    invoice_discounts.for_new_invoice(ctx, obj, params)  # the ones passed, else the customer's
    _apply(ctx, obj, params)
    if behavior == "include":
        for item in reversed(pending):  # oldest first, as Stripe orders the lines
            invoice_items.add_to_invoice(ctx, dict(item), obj)
    recompute(obj)
    ctx.save(obj)
    ctx.emit("invoice.created", obj)  # with its discounts, settings and lines
    return obj


@resource.route("GET", "/v1/invoices/search", params=SEARCH_PARAMS)
def search(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Search invoices (``customer``, ``status``, ``total``, ``number``, ``currency``, ``created``, metadata)."""
    return search_page(ctx, "invoice", params, "/v1/invoices/search",
                       {"customer", "status", "total", "number", "currency", "created", "subscription"})


@resource.route("GET", "/v1/invoices/{id}")
def retrieve(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Retrieve an invoice."""
    return ctx.get("invoice", id, param="invoice")


@resource.route("POST", "/v1/invoices/{id}", params={**FIELDS, "discounts": invoice_discounts.DISCOUNTS})
def update(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Update a draft invoice (a finalized one: only metadata, description, footer, auto_advance, due date)."""
    obj = ctx.get("invoice", id, param="invoice")
    before = ctx.get("invoice", id, param="invoice")
    if obj["status"] != "draft":
        fixed = sorted(set(params) - _OPEN_EDITABLE)
        if obj["status"] in ("paid", "void"):
            fixed = sorted(set(params) - {"metadata", "description", "footer"})
        if fixed:
            raise StripeError(f"You can't update `{fixed[0]}` on an invoice that is {obj['status']}.",
                              param=fixed[0], code="invoice_not_editable")
    _apply(ctx, obj, params)
    if "discounts" in params:  # a draft's (finalized invoices refuse the param above)
        invoice_discounts.set_on_invoice(ctx, obj, params["discounts"])
        recompute(obj)
    if obj["status"] == "open" and "payment_settings" in params:
        invoice_lifecycle.offer_payment_methods(ctx, obj)
    ctx.save(obj)
    ctx.emit("invoice.updated", obj, previous=before)
    return obj


@resource.route("DELETE", "/v1/invoices/{id}")
def delete(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Delete a draft invoice (its invoice items go back to pending: Stripe deletes them with it)."""
    obj = ctx.get("invoice", id, param="invoice")
    if obj["status"] != "draft":
        raise StripeError("You can only delete draft invoices.", code="invoice_not_editable")
    for item in [i for i in ctx.store.scan("invoiceitem") if i.get("invoice") == id]:
        ctx.save({**item, "deleted": True})
    ctx.save({**deleted_stub(obj), "created": obj["created"]})
    ctx.emit("invoice.deleted", obj)
    return deleted_stub(obj)


@resource.route("GET", "/v1/invoices/{id}/lines", params=LIST_PARAMS)
def list_lines(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """An invoice's line items."""
    invoice = ctx.get("invoice", id, param="invoice")
    return ctx.list_page("line_item", {k: v for k, v in params.items() if k != "created"},
                         f"/v1/invoices/{id}/lines", items=[dict(line) for line in invoice["_lines"]])


@resource.route("GET", "/v1/invoices", params={
    **LIST_PARAMS, "customer": Str(), "subscription": Str(), "collection_method": COLLECTION,
    "status": Enum("draft", "open", "paid", "uncollectible", "void"), "due_date": Str()})
def list_invoices(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """List invoices with ``customer``, ``subscription``, ``status`` filters."""
    def keep(inv: dict[str, Any]) -> bool:
        return all((
            "customer" not in params or inv["customer"] == params["customer"],
            "subscription" not in params or inv["_subscription"] == params["subscription"],
            "status" not in params or inv["status"] == params["status"],
            "collection_method" not in params or inv["collection_method"] == params["collection_method"],
        ))

    return ctx.list_page("invoice", params, "/v1/invoices", where=keep)
