"""Tax rates on invoices: which rates a line takes, its tax amounts, and the invoice's totals.

Which rates: a line's own (an invoice item's or a subscription item's ``tax_rates``, kept on the stored line as
``_tax_rates``), else the invoice's ``default_tax_rates`` (a subscription's invoices copy the subscription's) —
Stripe: "When set, the default_tax_rates on the invoice do not apply to this line". Rates are stored as copies of
the tax rate objects (their percentage and inclusiveness never change); renderers show them as they are now
(``current``).

How much, per line (docs.stripe.com/billing/taxes/tax-rates, "Discounts" and "Rounding"): discounts come first —
the line's own ``discount_amounts`` and its share of invoice-level discounts; an inclusive rate is carved out of
that discounted amount (``amount × r / (1 + Σ inclusive r)``); an exclusive rate applies to the discounted amount
less the inclusive tax and adds to the total. Each tax is rounded per line ("line item level", one of the two
settings Stripe offers) to the smallest currency unit, half up (away from zero for credits). Stripe does not
publish its tie-breaking rule; half up is our choice. ``taxable_amount`` is the discounted amount less inclusive
tax.

Shapes: the stored line's ``taxes`` and the invoice's ``total_taxes`` are the 2025-03-31 (basil) ones; before
basil, invoices render ``tax`` and ``total_tax_amounts`` and lines ``tax_amounts``/``tax_rates`` instead
(``legacy_invoice_fields``, ``legacy_line_fields``).

Not modelled: customers' ``tax_exempt`` (exempt/reverse back out inclusive taxes and skip exclusive ones), invoice
level rounding, Stripe Tax (``automatic_tax``) and Checkout's ``tax_rates``.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from stripebench_emulator.model.context import RequestContext

# The reason basil's ``taxes`` give for a manual tax rate (Stripe's published invoice and credit note examples use
# this value for ``tax_rate_details`` entries); before basil the field is null for tax rates (it came with Stripe
# Tax, which fills it) — our reading, Stripe does not document the value for manual rates.
TAXABILITY_REASON = "not_available"


def rates_from(ctx: RequestContext, ids: list[str] | None, param: str) -> list[dict[str, Any]]:
    """The tax rates ``ids`` name (``param[i]`` in the 404 for an unknown one), as stored copies."""
    rates = []
    for i, rate_id in enumerate(ids or []):
        rate = ctx.get("tax_rate", rate_id, param=f"{param}[{i}]")
        rates.append({k: v for k, v in rate.items() if not k.startswith("_")})
    return rates


def current(ctx: RequestContext, rates: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """Stored rate copies as the tax rates are now (their labels, ``active`` and metadata may have changed)."""
    return [ctx.render(ctx.store.peek("tax_rate", rate["id"]) or rate) for rate in rates or []]


def _round(value: Decimal) -> int:
    return int(value.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def _pct(rate: dict[str, Any]) -> Decimal:
    return Decimal(str(rate["percentage"])) / 100


def line_taxes(base: int, rates: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int, int]:
    """(``taxes`` entries, inclusive total, exclusive total) for a line whose discounted amount is ``base``."""
    inclusive = [r for r in rates if r["inclusive"]]
    net = Decimal(base) / (1 + sum((_pct(r) for r in inclusive), Decimal(0)))
    amounts = {id(r): _round(net * _pct(r)) for r in inclusive}
    included = sum(amounts.values())
    taxable = base - included
    for rate in rates:
        if not rate["inclusive"]:
            amounts[id(rate)] = _round(Decimal(taxable) * _pct(rate))
    entries: list[dict[str, Any]] = [{"amount": amounts[id(rate)],
                                      "tax_behavior": "inclusive" if rate["inclusive"] else "exclusive",
                "tax_rate_details": {"tax_rate": rate["id"]}, "taxability_reason": TAXABILITY_REASON,
                "taxable_amount": taxable, "type": "tax_rate_details"} for rate in rates]
    return entries, included, sum(e["amount"] for e in entries) - included


def split(total: int, weights: list[int]) -> list[int]:
    """``total`` split in proportion to ``weights`` (whole cents, largest remainders first, summing to ``total``).

    Stripe spreads an invoice-level discount over the discountable lines' ``discount_amounts``; its exact rounding
    is not documented, so this is a plausible one, not a copy of it."""
    whole = sum(weights)
    if total <= 0 or whole <= 0:
        return [0] * len(weights)
    parts = [divmod(total * w, whole) for w in weights]
    shares = [share for share, _ in parts]
    order = sorted(range(len(weights)), key=lambda i: (-parts[i][1], i))
    for i in order[:total - sum(shares)]:
        shares[i] += 1
    return shares


def _discount_shares(invoice: dict[str, Any]) -> list[int]:
    """Each line's discount: its own ``discount_amounts`` plus its share (by amount, among discountable lines) of
    invoice-level discounts not already spread onto lines."""
    lines = invoice["_lines"]
    own = [sum(d["amount"] for d in line.get("discount_amounts") or []) for line in lines]
    rest = sum(d["amount"] for d in invoice.get("total_discount_amounts") or []) - sum(own)
    weights = [max(line["amount"] - own[i], 0) if line.get("discountable", True) else 0
               for i, line in enumerate(lines)]
    return [o + s for o, s in zip(own, split(rest, weights), strict=True)]


def apply(invoice: dict[str, Any]) -> None:
    """Lines' ``taxes`` and the invoice's totals from its lines, discounts, rates and payments."""
    defaults = invoice.get("default_tax_rates") or []
    invoice["_lines"] = [dict(line) for line in invoice["_lines"]]  # set below: a saved invoice keeps its own
    subtotal = discounts = inclusive = exclusive = gross_inclusive = 0
    totals: dict[str, dict[str, Any]] = {}
    for line, discount in zip(invoice["_lines"], _discount_shares(invoice), strict=False):
        rates = line.get("_tax_rates") or defaults
        base = line["amount"] - discount
        taxes, included, added = line_taxes(base, rates)
        line["taxes"] = taxes
        line["_excluding_tax"] = base - included
        subtotal += line["amount"]
        discounts += discount
        inclusive += included
        exclusive += added
        # the tax-inclusive part of the undiscounted amount (``subtotal_excluding_tax`` is before any discount)
        gross_inclusive += line_taxes(line["amount"], [r for r in rates if r["inclusive"]])[1] if discount else included
        for entry in taxes:
            rate_id = entry["tax_rate_details"]["tax_rate"]
            if rate_id in totals:
                totals[rate_id]["amount"] += entry["amount"]
                totals[rate_id]["taxable_amount"] += entry["taxable_amount"]
            else:
                totals[rate_id] = {**entry, "tax_rate_details": dict(entry["tax_rate_details"])}
    total = subtotal - discounts + exclusive
    invoice.update(subtotal=subtotal, subtotal_excluding_tax=subtotal - gross_inclusive, total=total,
                   total_excluding_tax=total - exclusive - inclusive, total_taxes=list(totals.values()),
                   amount_due=max(total, 0),
                   amount_remaining=max(max(total, 0) - invoice.get("amount_paid", 0), 0))


def legacy_invoice_fields(invoice: dict[str, Any]) -> dict[str, Any]:
    """``tax`` and ``total_tax_amounts`` as invoices had them before 2025-03-31 (``tax`` null without tax rates)."""
    entries = invoice.get("total_taxes") or []
    return {"tax": sum(e["amount"] for e in entries) if entries else None,
            "total_tax_amounts": [_legacy_amount(e) for e in entries]}


def legacy_line_fields(line: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """A line's ``tax_amounts``, ``tax_rates`` (its own rates, not the invoice's defaults) and amounts excluding
    tax as lines had them before 2025-03-31."""
    excluding = line.get("_excluding_tax", line["amount"])
    quantity = line.get("quantity") or 0
    unit = (Decimal(excluding) / quantity).quantize(Decimal("1.000000000000")).normalize() if quantity else None
    return {"tax_amounts": [_legacy_amount(e) for e in line.get("taxes") or []],
            "tax_rates": current(ctx, line.get("_tax_rates")), "amount_excluding_tax": excluding,
            "unit_amount_excluding_tax": None if unit is None else f"{unit:f}"}


def _legacy_amount(entry: dict[str, Any]) -> dict[str, Any]:
    return {"amount": entry["amount"], "inclusive": entry["tax_behavior"] == "inclusive",
            "tax_rate": entry["tax_rate_details"]["tax_rate"], "taxability_reason": None,
            "taxable_amount": entry["taxable_amount"]}
