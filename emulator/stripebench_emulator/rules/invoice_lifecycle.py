"""An invoice's life after its draft: finalised, paid (by card, out of band, in parts), voided.

Status moves as on Stripe: draft → open (finalize) → paid / void / uncollectible; an uncollectible invoice can
still be paid or voided. Partial payments (API 2025-05-28): each attached PaymentIntent becomes an invoice
payment; ``amount_paid`` grows and the invoice stays open until ``amount_remaining`` reaches zero.

Used by the invoice routes, Billing's invoices (``billing_invoice``), Checkout and the hosted invoice page:
``finalize_invoice``
(which makes the invoice's PaymentIntent, as Stripe does), ``record_payment`` (the one way any invoice is paid:
amounts, status, invoice payments and events), ``open_intent`` (the unconfirmed
PaymentIntent an invoice waits on), ``pay_invoice`` (confirms that PaymentIntent), ``credit_intent`` (a
PaymentIntent of the invoice, its default one or one attached earlier, has now succeeded), ``void_invoice``,
``create_paid_invoice`` (Checkout's invoices, paid as they are made).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from stripebench_emulator.model.context import RequestContext
from stripebench_emulator.model.errors import StripeError
from stripebench_emulator.rules import billing_time, intents
from stripebench_emulator.rules.invoicing import invoice_entries, new_invoice, new_line, recompute

# Called as hook(ctx, invoice) once an invoice is paid, by any means (Billing activates the subscription it bills).
ON_PAID: list[Callable[[RequestContext, dict[str, Any]], None]] = []


_NO_PAYMENT_METHOD = ("This customer has no attached payment source or default payment method. Please consider "
                      "adding a default payment method. For more information, visit "
                      "https://stripe.com/docs/billing/subscriptions/payment-methods-setting#payment-method-priority.")


def check_payable(invoice: dict[str, Any]) -> None:
    """Stripe's refusals for paying (or attaching a payment to) an invoice that cannot take one."""
    if invoice["status"] == "void":
        raise StripeError("Voided invoices cannot be paid.", param="invoice")
    if invoice["status"] == "paid":
        raise StripeError("Invoice is already paid.", param="invoice")


def finalize_invoice(ctx: RequestContext, invoice: dict[str, Any], caller_pays: bool = False) -> dict[str, Any]:
    """Draft → open: number, hosted page, ``invoice.finalized``.

    As on Stripe, finalising makes the PaymentIntent the invoice is paid through (``open_intent``, its open default
    payment; ``payment_intent.created`` comes first, so ``invoice.finalized`` already names it) unless nothing is
    due: a zero-amount invoice is paid at once instead. ``caller_pays``: the caller records the payment itself
    (Checkout's paid invoices), so neither happens here."""
    now = ctx.now()
    count = len([i for i in ctx.store.scan("invoice") if i.get("number")])
    invoice.update({"status": "open", "number": f"EMU-{count + 1:04d}", "effective_at": now,
                    "automatically_finalizes_at": None,  # null once the invoice is no longer a draft
                    "hosted_invoice_url": f"{ctx.base_url}/i/{invoice['id']}",
                    "customer_tax_ids": invoice_entries(ctx, invoice["customer"]),
                    "status_transitions": {**invoice["status_transitions"], "finalized_at": now}})
    recompute(invoice)
    if not caller_pays and invoice["amount_due"] > 0:
        open_intent(ctx, invoice, f"Payment for Invoice {invoice['number']}")
    ctx.save(invoice)
    ctx.emit("invoice.finalized", invoice)
    if not caller_pays and invoice["amount_due"] == 0:
        mark_paid(ctx, invoice)
    return invoice


def mark_paid(ctx: RequestContext, invoice: dict[str, Any], out_of_band: bool = False) -> None:
    """Open → paid (``invoice.paid``; ``invoice.payment_succeeded`` too unless paid outside Stripe).

    Called only by ``record_payment`` (and ``pay_invoice`` out of band): an open default payment that other
    payments made unnecessary is canceled, and so is its PaymentIntent, as Stripe cancels the default
    PaymentIntent (``cancellation_reason`` stays null: Stripe documents none for this)."""
    now = ctx.now()
    dropped = [p for p in own_payments(invoice) if p["status"] == "open"]
    for payment in dropped:
        payment.update(status="canceled", canceled_at=now)
    invoice.update({"status": "paid", "amount_remaining": 0, "attempted": True, "next_payment_attempt": None,
                    "status_transitions": {**invoice["status_transitions"], "paid_at": now}})
    if out_of_band:
        invoice["_paid_out_of_band"] = True
    ctx.save(invoice)
    ctx.emit("invoice.paid", invoice)
    if not out_of_band:
        ctx.emit("invoice.payment_succeeded", invoice)
    for hook in ON_PAID:
        hook(ctx, invoice)
    _cancel_intents(ctx, [p for p in dropped if p["is_default"]], None)


def _payment_id(ctx: RequestContext, invoice: dict[str, Any], default: bool) -> str:
    # The default payment keeps the id derived from the invoice (what earlier emulator versions returned).
    return "inpay_" + invoice["id"].removeprefix("in_") if default else ctx.new_id("inpay")


def new_payment(ctx: RequestContext, invoice: dict[str, Any], pi_id: str, amount: int, default: bool,
                 paid: bool) -> dict[str, Any]:
    payment = {"id": _payment_id(ctx, invoice, default), "payment_intent": pi_id, "amount_requested": amount,
               "amount_paid": amount if paid else None, "status": "paid" if paid else "open", "created": ctx.now(),
               "paid_at": ctx.now() if paid else None, "canceled_at": None, "is_default": default}
    own_payments(invoice).append(payment)
    return payment


def own_payments(invoice: dict[str, Any]) -> list[dict[str, Any]]:
    """The invoice's payments as copies it may change: a saved invoice's own list and entries stay as saved."""
    invoice["_payments"] = [dict(p) for p in invoice.get("_payments") or []]
    return invoice["_payments"]


def open_intent(ctx: RequestContext, invoice: dict[str, Any], description: str, *, default: bool = True,
                **fields: Any) -> dict[str, Any]:
    """The PaymentIntent an open invoice is paid through, created unconfirmed for what remains in the invoice's
    currency for its customer (``fields``: more create params, e.g. Billing's ``setup_future_usage``), and recorded
    as an open invoice payment: the default one (its ``payment_intent`` before 2025-03-31) unless ``default`` is
    False. The caller emits the invoice's event; confirming the PI (server-side or with its client_secret) pays the
    invoice through ``credit_intent``. It offers the invoice's ``payment_settings.payment_method_types`` when set,
    else the PaymentIntent's own default."""
    pi = intents.new_intent(ctx, {"amount": invoice["amount_remaining"], "currency": invoice["currency"],
                                          "customer": invoice["customer"], "description": description,
                                          **_offered_types(invoice), **fields})
    pi["_invoice"] = invoice["id"]
    ctx.save(pi)
    if default:
        invoice["_payment_intent"] = pi["id"]
    new_payment(ctx, invoice, pi["id"], invoice["amount_remaining"], default=default, paid=False)
    ctx.save(invoice)
    return pi


def _offered_types(invoice: dict[str, Any]) -> dict[str, Any]:
    """The create param that gives an invoice's PaymentIntent the invoice's payment method types (none if unset)."""
    types = (invoice.get("payment_settings") or {}).get("payment_method_types")
    return {"payment_method_types": list(types)} if types else {}


def offer_payment_methods(ctx: RequestContext, invoice: dict[str, Any]) -> None:
    """An open invoice's ``payment_settings`` changed: its default PaymentIntent, while still unconfirmed, offers
    the new payment method types (unset: the types a PaymentIntent has by default)."""
    payment = _open_default(invoice)
    pi = ctx.find("payment_intent", payment["payment_intent"]) if payment else None
    if pi is None or pi["status"] not in ("requires_payment_method", "requires_confirmation"):
        return
    types = _offered_types(invoice).get("payment_method_types")
    pi.update(payment_method_types=types or ["card"], _apm_default=not types)
    ctx.save(pi)


def _open_default(invoice: dict[str, Any]) -> dict[str, Any] | None:
    return next((p for p in own_payments(invoice) if p["is_default"] and p["status"] == "open"), None)


def _sync_default(ctx: RequestContext, invoice: dict[str, Any]) -> None:
    """Stripe keeps the open default payment, and its PaymentIntent while unconfirmed, at what remains to pay."""
    payment = _open_default(invoice)
    if payment is None or invoice["amount_remaining"] <= 0:
        return
    payment["amount_requested"] = invoice["amount_remaining"]
    pi = ctx.find("payment_intent", payment["payment_intent"])
    if pi is not None and pi["status"] in ("requires_payment_method", "requires_confirmation"):
        pi["amount"] = invoice["amount_remaining"]
        ctx.save(pi)


def record_payment(ctx: RequestContext, invoice: dict[str, Any], pi_id: str | None, amount: int, *,
                   default: bool = False) -> None:
    """The one way an invoice is paid: credit ``amount`` paid by PaymentIntent ``pi_id`` (None: nothing to pay, a
    zero-amount invoice) as a new invoice payment, and settle the invoice when nothing remains."""
    before = ctx.find("invoice", invoice["id"])
    invoice.setdefault("_payments", [])
    if pi_id is not None:
        payment = new_payment(ctx, invoice, pi_id, amount, default, paid=True)
        _credit(ctx, invoice, payment, amount)
    _settle(ctx, invoice, before)


def _settle(ctx: RequestContext, invoice: dict[str, Any], before: dict[str, Any] | None) -> None:
    if invoice["amount_remaining"] == 0:
        paid_by_card = any(p["status"] == "paid" for p in invoice["_payments"])
        invoice.update(attempt_count=max(invoice["attempt_count"], 1 if paid_by_card else 0))
        mark_paid(ctx, invoice)
    else:
        ctx.save(invoice)
        ctx.emit("invoice.updated", invoice, previous=before)


def _credit(ctx: RequestContext, invoice: dict[str, Any], payment: dict[str, Any], amount: int) -> None:
    invoice["amount_paid"] += amount
    invoice["_payment_intent"] = invoice["_payment_intent"] or payment["payment_intent"]
    recompute(invoice)
    if not payment["is_default"]:
        _sync_default(ctx, invoice)
    ctx.save(invoice)
    ctx.emit("invoice_payment.paid", _payment_object(invoice, payment))


def _payment_object(invoice: dict[str, Any], payment: dict[str, Any]) -> dict[str, Any]:
    return as_object(invoice, payment)


def credit_intent(ctx: RequestContext, pi: dict[str, Any]) -> dict[str, Any] | None:
    """A PaymentIntent of an invoice (its default one, or one attached before it was paid) has succeeded: credit
    its open invoice payment and settle the invoice when due. Returns the invoice (None: the PI pays none)."""
    invoice = ctx.find("invoice", pi.get("_invoice") or "")
    if invoice is None:
        return None
    if invoice["status"] in ("paid", "void"):
        return invoice
    payments = own_payments(invoice)
    before = ctx.find("invoice", invoice["id"])
    for payment in payments:
        if payment["payment_intent"] == pi["id"] and payment["status"] == "open":
            payment.update(status="paid", amount_paid=pi["amount_received"], paid_at=ctx.now())
            _credit(ctx, invoice, payment, pi["amount_received"])
            _settle(ctx, invoice, before)
            return invoice
    if not any(p["payment_intent"] == pi["id"] for p in payments):  # linked to the invoice, never recorded
        record_payment(ctx, invoice, pi["id"], pi["amount_received"], default=not payments)
    return invoice


def _default_payment_method(ctx: RequestContext, invoice: dict[str, Any]) -> str | None:
    customer = ctx.find("customer", invoice["customer"] or "") or {}
    return (invoice.get("default_payment_method") or invoice.get("default_source")
            or (customer.get("invoice_settings") or {}).get("default_payment_method") or customer.get("default_source"))


def pay_invoice(ctx: RequestContext, invoice: dict[str, Any], *, payment_method: str | None = None,
                paid_out_of_band: bool = False, off_session: bool = True) -> dict[str, Any] | StripeError:
    """Pay what remains (a draft is finalized first) by confirming the invoice's PaymentIntent with the card; a
    decline is returned, with the failed attempt kept. On a test clock's customer, at that clock's time."""
    check_payable(invoice)
    ctx = on_its_clock(ctx, invoice)
    if invoice["status"] == "draft":
        finalize_invoice(ctx, invoice)
        if invoice["status"] == "paid":
            return invoice
    if paid_out_of_band:
        invoice["amount_paid"] = invoice["amount_due"]  # settled outside Stripe: no invoice payment is recorded
        mark_paid(ctx, invoice, out_of_band=True)
        return invoice
    pm_id = payment_method or _default_payment_method(ctx, invoice)
    if not pm_id:
        raise StripeError(_NO_PAYMENT_METHOD, param="payment_method")
    pi = _intent_to_confirm(ctx, invoice)
    before = ctx.find("invoice", invoice["id"])
    invoice.update(attempt_count=invoice["attempt_count"] + 1, attempted=True)
    ctx.save(invoice)
    pi, error = intents.confirm_intent(ctx, pi, {"payment_method": pm_id,
                                                         **({"off_session": "true"} if off_session else {})})
    invoice.update(ctx.get("invoice", invoice["id"]))  # its success hook (credit_intent) has paid the invoice
    if error is not None or pi["status"] != "succeeded":
        invoice.update(last_finalization_error=None)
        ctx.save(invoice)
        ctx.emit("invoice.payment_failed", invoice)
        ctx.emit("invoice.updated", invoice, previous=before)
        return error or StripeError("This payment requires authentication; pay the invoice on its hosted page.",
                                    status=402, type="card_error", code="invoice_payment_intent_requires_action")
    return invoice


def _intent_to_confirm(ctx: RequestContext, invoice: dict[str, Any]) -> dict[str, Any]:
    """What ``pay`` confirms: the invoice's own PaymentIntent (its open default payment, made at finalisation);
    one is made now for an invoice finalised without (a subscription's charged invoice that Billing finalised with
    no payment method to charge, or with ``invoice_now`` at cancellation), or when the default one can no longer
    be confirmed."""
    payment = _open_default(invoice)
    pi = ctx.find("payment_intent", payment["payment_intent"]) if payment else None
    if pi is not None and pi["status"] in ("requires_payment_method", "requires_confirmation", "requires_action"):
        return pi
    return open_intent(ctx, invoice, f"Payment for Invoice {invoice['number']}",
                       default=not any(p["is_default"] for p in invoice["_payments"]))


def on_its_clock(ctx: RequestContext, invoice: dict[str, Any]) -> RequestContext:
    """``ctx`` at the invoice's test clock's frozen time when its customer is on one (Billing's drafts of such a
    customer's subscription are finalised at that time, by the API as by the clock), else ``ctx`` itself."""
    if not invoice.get("test_clock"):
        return ctx
    return billing_time.at(ctx, billing_time.clock_now(ctx, invoice["test_clock"]))


def void_invoice(ctx: RequestContext, invoice: dict[str, Any]) -> dict[str, Any]:
    """Open (or uncollectible) → void: ``voided_at``, ``invoice.voided`` (also Billing's, for an expired
    incomplete subscription's first invoice). The PaymentIntent the invoice made to be paid through (its open
    default payment) is canceled with ``cancellation_reason=void_invoice``, as Stripe does, so it can no longer
    be confirmed; PaymentIntents the caller attached stay theirs."""
    now = ctx.now()
    invoice.update(status="void", status_transitions={**invoice["status_transitions"], "voided_at": now})
    defaults = [p for p in own_payments(invoice) if p["is_default"] and p["status"] == "open"]
    for payment in defaults:
        payment.update(status="canceled", canceled_at=now)
    ctx.save(invoice)
    ctx.emit("invoice.voided", invoice)
    _cancel_intents(ctx, defaults, "void_invoice")
    return invoice


def _cancel_intents(ctx: RequestContext, payments: list[dict[str, Any]], reason: str | None) -> None:
    """Cancel the PaymentIntents of canceled default payments, so they can no longer be confirmed."""
    for payment in payments:
        pi = ctx.find("payment_intent", payment["payment_intent"])
        if pi is not None and pi["status"] not in ("succeeded", "canceled"):
            intents.cancel_intent(ctx, pi, reason)


def _on_intent_succeeded(ctx: RequestContext, pi: dict[str, Any]) -> None:
    if pi.get("_invoice"):  # attached to an invoice before it was paid (partial payments)
        credit_intent(ctx, pi)


def create_paid_invoice(ctx: RequestContext, subscription: dict[str, Any] | None, lines: list[dict[str, Any]], *,
                        payment_intent: str | None, discount_amount: int = 0, customer_id: str | None = None,
                        currency: str | None = None, metadata: dict[str, str] | None = None,
                        billing_reason: str = "subscription_create", discount_id: str | None = None
                        ) -> dict[str, Any]:
    """Create an invoice already paid (``lines``: ``[{price, quantity, amount, discount}]``).

    ``discount_id``: the ``di_`` discount the lines' ``discount`` amounts come from (a subscription's), named in
    the lines' ``discount_amounts``, ``total_discount_amounts`` and ``discounts`` as on a Billing invoice.

    For a subscription's first invoice pass the subscription (``subscription.latest_invoice`` then points at it);
    for a one-time Checkout payment with ``invoice_creation`` pass None with ``customer_id`` and ``currency``.
    Emits ``invoice.created``, ``invoice.finalized``, ``invoice.paid`` and ``invoice.payment_succeeded`` in
    Stripe's order.
    """
    now = ctx.now()
    customer_id = subscription["customer"] if subscription else customer_id
    currency = subscription["currency"] if subscription else currency
    obj = new_invoice(ctx, customer_id, currency, subscription=subscription, billing_reason=billing_reason,
                      metadata=metadata, emit=False)
    period = (subscription["_period_start"], subscription["_period_end"]) if subscription else (now, now)
    sub_id = subscription["id"] if subscription else None
    items = {item["price"]: item for item in subscription["_items"]} if subscription else {}
    obj["_lines"] = list(obj["_lines"])  # new_invoice saved the invoice: its list is the stored one's
    for line in lines:
        item = items.get(line["price"])  # one-time prices are billed once, as plain invoice items
        price = ctx.find("price", line["price"]) or {}
        obj["_lines"].append(new_line(
            ctx, obj["id"], amount=line["amount"], currency=price.get("currency") or currency,
            quantity=line["quantity"], price=price or None, period=period, subscription=sub_id,
            subscription_item=item["id"] if item else None, discount=line.get("discount", 0),
            discount_id=discount_id))
    if discount_amount:
        obj["total_discount_amounts"] = [{"amount": discount_amount, "discount": discount_id}]
        obj["discounts"] = [discount_id] if discount_id else []
    recompute(obj)
    obj["webhooks_delivered_at"] = now
    ctx.save(obj)
    ctx.emit("invoice.created", obj)
    finalize_invoice(ctx, obj, caller_pays=True)
    record_payment(ctx, obj, payment_intent, obj["amount_remaining"], default=True)
    if subscription is None:
        return obj
    before = dict(subscription)
    subscription["latest_invoice"] = obj["id"]
    ctx.save(subscription)
    ctx.emit("customer.subscription.updated", subscription, previous=before)
    return obj


def as_object(invoice: dict[str, Any], payment: dict[str, Any]) -> dict[str, Any]:
    """One stored payment of ``invoice`` as an ``invoice_payment`` object."""
    return {
        "id": payment["id"], "object": "invoice_payment", "amount_paid": payment["amount_paid"],
        "amount_requested": payment["amount_requested"], "created": payment["created"],
        "currency": invoice["currency"], "invoice": invoice["id"], "is_default": payment["is_default"],
        "livemode": False, "payment": {"payment_intent": payment["payment_intent"], "type": "payment_intent"},
        "status": payment["status"],
        "status_transitions": {"canceled_at": payment.get("canceled_at"), "paid_at": payment["paid_at"]},
    }


intents.ON_SUCCEEDED.append(_on_intent_succeeded)
