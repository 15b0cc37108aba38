"""How much each discount takes off each line of an invoice: ``discount_amounts`` on lines, ``total_discount_amounts``.

An invoice whose discounts are worked out here carries ``_discount_rules`` (its own, invoice-level discounts) and
each of its lines may carry ``_discount_rules`` of its own (an invoice item's discounts). A rule is what a stored
``di_`` discount takes off, frozen when it is applied (``rule``): ``{discount, percent_off, amount_off, products}``.
Invoices without ``_discount_rules`` (Checkout's paid invoices, invoices saved before this module) keep the
``discount_amounts`` they were built with.

Order (Stripe's invoice reference: line item discounts are applied before invoice discounts): each line's own
discounts first, in the order given, each on what is left of the line; then the invoice's, in order, each on what
is left of the lines it may discount. An invoice-level discount skips lines that are not ``discountable`` (a
proration, an invoice item created with ``discountable=false``) and lines with a negative amount (coupons stopped
applying to those in 2015-03-24).

``applies_to.products``: a coupon limited to products only discounts lines whose price's product is listed (a
line without a price has no product, so none). ``percent_off`` is taken off each eligible line; ``amount_off`` is
taken once, off the eligible lines together (at most what they come to), spread over them in proportion — our
reading of Stripe's coupon guide, which restricts "the discount" to eligible products and says no more about
how an amount is shared.

Rounding: a discount's amount is rounded once (Python's ``round``, as Billing always did here) and split over its
lines with ``billing_tax.split``; Stripe does not publish its rounding.
"""

from __future__ import annotations

from typing import Any

from stripebench_emulator.rules import billing_tax


def rule(discount: dict[str, Any], currency: str | None) -> dict[str, Any]:
    """What the stored discount ``discount`` (its coupon as applied, ``_coupon``) takes off an invoice in
    ``currency``. An ``amount_off`` coupon in another currency takes off its ``currency_options`` amount for
    ``currency``, else nothing."""
    coupon = discount["_coupon"]
    amount = coupon.get("amount_off")
    if amount is not None and currency and coupon.get("currency") and coupon["currency"] != currency:
        amount = ((coupon.get("_currency_options") or {}).get(currency) or {}).get("amount_off") or 0
    products = (coupon.get("_applies_to") or {}).get("products") or None
    return {"discount": discount["id"], "percent_off": coupon.get("percent_off"), "amount_off": amount,
            "products": list(products) if products else None}


def product_of(line: dict[str, Any]) -> str | None:
    """The product of a stored line's price (None for a line without a price)."""
    return ((line.get("pricing") or {}).get("price_details") or {}).get("product")


def eligible(rule_: dict[str, Any], product: str | None) -> bool:
    """Whether a line of ``product`` may take ``rule_``'s discount (``applies_to.products``)."""
    return rule_["products"] is None or product in rule_["products"]


def amount(rule_: dict[str, Any], bases: list[int]) -> list[int]:
    """What ``rule_`` takes off lines that have ``bases`` left to discount (0 for the ones it may not discount)."""
    base = sum(bases)
    if base <= 0:
        return [0] * len(bases)
    if rule_.get("percent_off") is not None:
        total = round(base * rule_["percent_off"] / 100)
    else:
        total = min(rule_.get("amount_off") or 0, base)
    return billing_tax.split(total, bases)


def allocate(invoice: dict[str, Any]) -> None:
    """Set the lines' ``discount_amounts`` (and ``discounts``, for lines with their own) and the invoice's
    ``total_discount_amounts`` from the discount rules; nothing for an invoice without ``_discount_rules``."""
    if "_discount_rules" not in invoice:
        return
    lines = [dict(line) for line in invoice["_lines"]]  # replaced, never changed in place
    left = [max(line["amount"], 0) for line in lines]
    taken: list[list[dict[str, Any]]] = [[] for _ in lines]
    totals: dict[str, int] = {}
    for i, line in enumerate(lines):
        for own in line.get("_discount_rules") or []:
            off = amount(own, [left[i] if eligible(own, product_of(line)) else 0])[0]
            left[i] -= off
            totals[own["discount"]] = totals.get(own["discount"], 0) + off
            if off:
                taken[i].append({"amount": off, "discount": own["discount"]})
    for shared in invoice["_discount_rules"]:
        bases = [left[i] if line.get("discountable", True) and eligible(shared, product_of(line)) else 0
                 for i, line in enumerate(lines)]
        shares = amount(shared, bases)
        totals[shared["discount"]] = totals.get(shared["discount"], 0) + sum(shares)
        for i, off in enumerate(shares):
            left[i] -= off
            if off:
                taken[i].append({"amount": off, "discount": shared["discount"]})
    for line, entries in zip(lines, taken, strict=True):
        line["discount_amounts"] = entries
        if "_discount_rules" in line:
            line["discounts"] = [own["discount"] for own in line["_discount_rules"]]
    invoice["_lines"] = lines
    invoice["total_discount_amounts"] = [{"amount": off, "discount": di} for di, off in totals.items()]


def total_of(invoice: dict[str, Any], discount_id: str) -> int:
    """What ``discount_id`` takes off ``invoice`` in all (after ``allocate``)."""
    return sum(e["amount"] for e in invoice.get("total_discount_amounts") or [] if e["discount"] == discount_id)
