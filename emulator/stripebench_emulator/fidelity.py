"""The fidelity gauge: each object kind the emulator serves, made through stripe-python against a served emulator,
against the fields the installed SDK declares for that kind (the annotations of the class stripe-python made the
object as: ``stripe.Customer``, ``stripe.checkout.Session``…).

A rendered field the SDK does not declare is an error (``undeclared``). A declared field we leave out is either in
``fidelity_gaps.GAPS`` with its reason, or ``unexplained``. ``stripebench-emulator fidelity`` prints the coverage
per kind; emulator/tests/test_fidelity.py fails on an undeclared field, an unexplained gap or a stale table entry.
Top-level fields only: nested hashes are not compared yet.
"""

from __future__ import annotations

import argparse
import keyword
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import stripe

from stripebench_emulator.fidelity_gaps import GAPS
from stripebench_emulator.web.server import running_emulator

KEY = "sk_test_fidelity_gauge"


def declared_fields(cls: type) -> set[str]:
    """The JSON fields ``cls`` declares: its own public annotations (a Python keyword is declared with ``_`` after
    it, e.g. ``from_``), without its class constants."""
    names = set()
    for name in vars(cls).get("__annotations__", {}):
        if name.startswith("_") or name.isupper():
            continue
        if name.endswith("_") and keyword.iskeyword(name[:-1]):
            name = name[:-1]
        names.add(name)
    return names


@dataclass
class Coverage:
    kind: str
    declared: set[str]
    rendered: set[str]
    explained: dict[str, str] = field(default_factory=dict)  # declared, absent, with the table's reason
    unexplained: set[str] = field(default_factory=set)  # declared, absent, not in the table
    undeclared: set[str] = field(default_factory=set)  # rendered, not declared by the SDK
    stale: set[str] = field(default_factory=set)  # in the table but rendered after all, or not declared

    @property
    def share(self) -> float:
        return len(self.rendered & self.declared) / len(self.declared) if self.declared else 1.0


def compare(kind: str, rendered: set[str], classes: dict[str, type]) -> Coverage:
    declared = declared_fields(classes[kind])
    gaps = {name: reason for (gap_kind, name), reason in GAPS.items() if gap_kind == kind}
    absent = declared - rendered
    return Coverage(kind, declared, rendered,
                    explained={n: gaps[n] for n in sorted(absent) if n in gaps},
                    unexplained={n for n in absent if n not in gaps},
                    undeclared=rendered - declared,
                    stale={n for n in gaps if n in rendered or n not in declared})


def make_objects(client: stripe.StripeClient, classes: dict[str, type]) -> dict[str, list[dict[str, Any]]]:
    """One or more objects of every kind, made the way an integration makes them; kind -> their rendered fields.
    ``classes`` gets the SDK's class for each kind: the one stripe-python itself made the object as."""
    v1 = client.v1
    made: dict[str, list[dict[str, Any]]] = {}

    def keep(*objects: Any) -> None:
        for obj in objects:
            made.setdefault(obj["object"], []).append(obj.to_dict())
            classes.setdefault(obj["object"], type(obj))

    product = v1.products.create(params={"name": "Gauge mug"})
    price = v1.prices.create(params={"product": product.id, "unit_amount": 1200, "currency": "usd"})
    monthly = v1.prices.create(params={"product": product.id, "unit_amount": 900, "currency": "usd",
                                       "recurring": {"interval": "month"}})
    plan = v1.plans.create(params={"product": product.id, "amount": 500, "currency": "usd", "interval": "month"})
    coupon = v1.coupons.create(params={"percent_off": 10, "duration": "once"})
    promo = v1.promotion_codes.create(params={"promotion": {"type": "coupon", "coupon": coupon.id}, "code": "GAUGE10"})
    customer = v1.customers.create(params={"email": "gauge@example.com", "payment_method": "pm_card_visa",
                                           "invoice_settings": {"default_payment_method": "pm_card_visa"},
                                           "tax_id_data": [{"type": "eu_vat", "value": "DE123456789"}]})
    keep(product, price, monthly, plan, coupon, promo, customer)
    keep(*v1.customers.tax_ids.list(customer.id).data)
    keep(v1.payment_methods.create(params={"type": "card", "card": {"token": "tok_visa"}}))
    intent = v1.payment_intents.create(params={"amount": 2000, "currency": "usd", "payment_method": "pm_card_visa",
                                               "confirm": True, "automatic_payment_methods": {
                                                   "enabled": True, "allow_redirects": "never"}})
    keep(intent)
    charge = v1.charges.retrieve(cast(str, intent.latest_charge))
    keep(charge)
    keep(v1.balance_transactions.retrieve(cast(str, charge.balance_transaction)))
    keep(v1.refunds.create(params={"payment_intent": intent.id, "amount": 500}))
    keep(v1.setup_intents.create(params={"customer": customer.id, "payment_method": "pm_card_visa", "confirm": True,
                                         "automatic_payment_methods": {"enabled": True, "allow_redirects": "never"}}))
    keep(v1.tokens.create(params={"card": {"number": "4242424242424242", "exp_month": "12", "exp_year": "2034",
                                           "cvc": "123"}}))
    keep(v1.customers.payment_sources.create(customer.id, params={"source": "tok_visa"}))
    keep(v1.checkout.sessions.create(params={"mode": "payment", "success_url": "https://example.com/ok",
                                             "line_items": [{"price": price.id, "quantity": 1}]}))
    keep(v1.tax_rates.create(params={"display_name": "VAT", "percentage": 20, "inclusive": False}))
    keep(v1.shipping_rates.create(params={"display_name": "Post", "type": "fixed_amount",
                                          "fixed_amount": {"amount": 500, "currency": "usd"}}))
    keep(v1.webhook_endpoints.create(params={"url": "https://example.com/hook", "enabled_events": ["*"]}))
    keep(v1.test_helpers.test_clocks.create(params={"frozen_time": int(time.time())}))
    keep(v1.billing.meters.create(params={"display_name": "Calls", "event_name": "gauge_calls",
                                          "default_aggregation": {"formula": "sum"}}))
    keep(v1.invoice_items.create(params={"customer": customer.id, "amount": 700, "currency": "usd"}))
    invoice = v1.invoices.create(params={"customer": customer.id, "pending_invoice_items_behavior": "include"})
    keep(invoice)
    paid = v1.invoices.pay(v1.invoices.finalize_invoice(invoice.id).id)
    keep(paid)
    keep(*v1.invoice_payments.list(params={"invoice": paid.id}).data)
    subscription = v1.subscriptions.create(params={"customer": customer.id, "items": [{"price": monthly.id}],
                                                   "discounts": [{"coupon": coupon.id}]})
    keep(subscription, *subscription["items"].data)
    keep(v1.subscription_schedules.create(params={"customer": customer.id, "start_date": "now", "phases": [
        {"items": [{"price": monthly.id}], "duration": {"interval": "month", "interval_count": 1}}]}))
    keep(*[d for d in subscription["discounts"] if not isinstance(d, str)])
    keep(*v1.events.list(params={"limit": 3}).data)
    return made


def gauge(url: str) -> tuple[list[Coverage], list[str]]:
    """Coverage per kind made against the emulator at ``url``, and kinds the SDK has no class for."""
    client = stripe.StripeClient(KEY, base_addresses={"api": url}, max_network_retries=0)
    classes: dict[str, type] = {}
    results, unknown = [], []
    for kind, objects in sorted(make_objects(client, classes).items()):
        if classes[kind] is stripe.StripeObject:  # the SDK made a plain object: it has no class for the kind
            unknown.append(kind)
            continue
        rendered = set().union(*(set(obj) for obj in objects))
        results.append(compare(kind, rendered, classes))
    return results, unknown


def report(results: list[Coverage], unknown: list[str], out: Callable[[str], object] = print) -> int:
    """Print coverage per kind; 1 when a field is undeclared, a gap unexplained or a table entry stale."""
    out(f"fidelity against stripe-python {stripe.VERSION} (API {stripe.api_version}); top-level fields")
    out(f"{'object':28s} {'declared':>8s} {'rendered':>8s} {'share':>6s}  explained gaps, problems")
    bad = bool(unknown)
    for c in results:
        problems = []
        if c.undeclared:
            problems.append(f"UNDECLARED {sorted(c.undeclared)}")
        if c.unexplained:
            problems.append(f"UNEXPLAINED {sorted(c.unexplained)}")
        if c.stale:
            problems.append(f"STALE in the table {sorted(c.stale)}")
        bad = bad or bool(problems)
        out(f"{c.kind:28s} {len(c.declared):8d} {len(c.rendered & c.declared):8d} {c.share:6.0%}  "
            f"{len(c.explained)}" + ("  " + "; ".join(problems) if problems else ""))
    for kind in unknown:
        out(f"{kind:28s} stripe-python has no class for it")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="stripebench-emulator fidelity",
        description="Make each object kind through stripe-python against an emulator and compare its fields with "
                    "the ones the SDK declares; exit 1 on an undeclared field or an unexplained gap.")
    parser.add_argument("--url", help="an emulator already running there (default: start one for the gauge)")
    parser.add_argument("--gaps", action="store_true", help="also list each explained gap with its reason")
    args = parser.parse_args(argv)
    if args.url:
        results, unknown = gauge(args.url)
    else:
        with running_emulator(seed=1) as server:
            results, unknown = gauge(server.url)
    status = report(results, unknown)
    if args.gaps:
        for c in results:
            for name, reason in c.explained.items():
                print(f"  {c.kind}.{name}: {reason}")
    return status


if __name__ == "__main__":
    sys.exit(main())
