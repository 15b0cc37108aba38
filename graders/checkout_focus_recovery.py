"""Grader for checkout-focus-recovery: did the order go through with exactly the details the task gave?

Reads the app's ``shop.db`` (the customers and orders it recorded) and the Stripe objects behind
them (the Customer from the contact step, the PaymentIntent from the payment step). The expected
details come from the environment's seed, so there is one source of truth. A field that the page's
focus-moving scripts cut short (an email of three letters, a street address of four characters,
an empty name on the card) shows up here as a wrong value or a missing payment.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from stripebench_tui.grading import Criterion, Grader, expect, failed, passed


def _load_seed() -> Any:
    from stripebench_tui.envs.manifest import environments_dir

    path = environments_dir() / "checkout-focus-recovery" / "seed.py"
    if not path.is_file():
        path = Path(__file__).resolve().parents[1] / "environments" / "checkout-focus-recovery" / "seed.py"
    spec = importlib.util.spec_from_file_location("checkout_focus_recovery_seed", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SEED = _load_seed()
DATABASE = "shop.db"


def _latest(ctx: Any, sql: str) -> Any:
    try:
        return ctx.db(DATABASE).execute(sql).fetchone()
    except Exception:  # noqa: BLE001 - no database or table yet: nothing recorded
        return None


def customer(ctx: Any) -> dict[str, Any] | None:
    """The Stripe Customer of the latest contact step the app recorded."""
    row = _latest(ctx, "SELECT stripe_customer FROM customers ORDER BY id DESC LIMIT 1")
    if row is None:
        return None
    return ctx.stripe.v1.customers.retrieve(row["stripe_customer"]).to_dict(recursive=True)


def _field(name: str, label: str):
    def check(ctx: Any, view: Any) -> Any:
        found = customer(ctx)
        if found is None:
            return failed("the contact & shipping step never succeeded (no customer recorded)")
        return expect(label, SEED.CUSTOMER[name], found.get(name), customer=found["id"])

    check.__name__ = f"customer_{name}"
    return check


def shipping_address(ctx: Any, view: Any) -> Any:
    """The customer's shipping address is the one the task gave, field by field."""
    found = customer(ctx)
    if found is None:
        return failed("the contact & shipping step never succeeded (no customer recorded)")
    address = ((found.get("shipping") or {}).get("address")) or {}
    wanted = {k: SEED.CUSTOMER[k] for k in ("line1", "city", "postal_code", "country")}
    actual = {k: address.get(k) for k in wanted}
    return expect("the shipping address", wanted, actual, customer=found["id"])


def _paid_order(ctx: Any) -> tuple[Any, dict[str, Any] | None]:
    row = _latest(ctx, "SELECT stripe_customer, payment_intent, amount FROM orders WHERE status = 'paid'"
                       " ORDER BY id DESC LIMIT 1")
    if row is None:
        return None, None
    return row, ctx.stripe.v1.payment_intents.retrieve(row["payment_intent"]).to_dict(recursive=True)


def order_paid(ctx: Any, view: Any) -> Any:
    """A paid order whose PaymentIntent succeeded for the customer of the contact step."""
    row, intent = _paid_order(ctx)
    if row is None:
        return failed("no paid order: the payment step never succeeded")
    found = customer(ctx)
    problems = []
    if intent["status"] != "succeeded":
        problems.append(f"its PaymentIntent is {intent['status']}")
    if found is None or intent.get("customer") != found["id"]:
        problems.append("it is not charged to the customer of the contact step")
    if intent["amount"] != row["amount"]:
        problems.append(f"Stripe charged {intent['amount']}, the order says {row['amount']}")
    if problems:
        return failed("; ".join(problems), payment_intent=intent["id"])
    return passed(f"order paid with {intent['id']}", payment_intent=intent["id"], amount=intent["amount"])


def promotion_applied(ctx: Any, view: Any) -> Any:
    """The paid amount carries the task's promotion code, and only it."""
    row, intent = _paid_order(ctx)
    if row is None:
        return failed("no paid order to carry the promotion code")
    return expect("the amount paid", SEED.expected_total(), intent["amount"], payment_intent=intent["id"])


ON = ("customer", "payment_intent")
GRADER = Grader((
    Criterion("customer email", 1.0, "the customer's email is exactly the task's", _field("email", "the email"), on=ON),
    Criterion("customer name", 1.0, "the customer's name is exactly the task's", _field("name", "the name"), on=ON),
    Criterion("shipping address", 1.0, "the shipping address is exactly the task's", shipping_address, on=ON),
    Criterion("order paid", 2.0, "a paid order, charged to that customer", order_paid, on=ON),
    Criterion("promotion applied", 1.0, f"the payment carries {SEED.PROMOTION_CODE}", promotion_applied, on=ON),
), description="Complete the checkout in the browser with exactly the given details despite the page moving focus.")
