"""Grader for partial-payments: the member's yearly invoice paid in two halves through two Checkout Sessions.

Everything is read through public means: the member's invoice, its invoice payments, the Checkout Sessions behind
them and the invoice's events through the official stripe SDK, and what the app recorded from its ``desk.db``.
The member, the total and the halves come from the environment's seed, so there is one source of truth. The
invoice is found from the member's email (customer → her desk subscription → its first invoice), not from the
app's database, so an app that rewrote its own records cannot point the grader elsewhere.
"""

from __future__ import annotations

import importlib.util
import threading
import time
from pathlib import Path
from typing import Any, Callable

from stripebench_tui.grading import Criterion, Grader, failed, passed, pending


def _load_seed() -> Any:
    from stripebench_tui.envs.manifest import environments_dir

    path = environments_dir() / "partial-payments" / "seed.py"
    if not path.is_file():
        path = Path(__file__).resolve().parents[1] / "environments" / "partial-payments" / "seed.py"
    spec = importlib.util.spec_from_file_location("partial_payments_seed", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SEED = _load_seed()
DATABASE = "desk.db"
FIRST, SECOND = SEED.halves()
CACHE_SECONDS = 1.0  # criteria judging at the same moment share one read


def _cached(ctx: Any, key: str, read: Callable[[], Any]) -> Any:
    """``read()``, shared by the criteria asking for ``key`` within CACHE_SECONDS of when the read *began* (a read
    that straddled a change is not passed off as newer than it is)."""
    memo = vars(ctx).setdefault("_partial_payments_memo", {})
    lock = memo.setdefault(("lock", key), threading.Lock())
    with lock:
        hit = memo.get(key)
        if hit is not None and time.monotonic() - hit[0] < CACHE_SECONDS:
            return hit[1]
        began = time.monotonic()
        value = read()
        memo[key] = (began, value)
        return value


class NoInvoice(Exception):
    """The member or her subscription invoice is not on this account (the seed did not run)."""


def invoice(ctx: Any, final: bool = False) -> dict[str, Any]:
    """The member's subscription invoice as plain data, its paid invoice payments (oldest first) under
    ``_payments``; NoInvoice when there is none."""

    def read() -> dict[str, Any]:
        client = ctx.stripe
        customer = SEED.member_customer(client)
        if customer is None:
            raise NoInvoice(f"no customer with email {SEED.MEMBER['email']}")
        sub = SEED.member_subscription(client, customer.id)
        if sub is None or not sub.latest_invoice:
            raise NoInvoice(f"{customer.id} has no desk subscription with an invoice")
        invoices = client.v1.invoices.list({"subscription": sub.id, "limit": 100}).data
        first = min(invoices, key=lambda i: i.created) if invoices else client.v1.invoices.retrieve(sub.latest_invoice)
        data = first.to_dict(recursive=True)
        listed = client.v1.invoice_payments.list({"invoice": data["id"], "limit": 100}).data
        rows = [p.to_dict(recursive=True) for p in listed]
        data["_all_payments"] = sorted(reversed(rows), key=lambda p: p["created"])  # ties: the list is newest first
        data["_payments"] = [p for p in data["_all_payments"] if p["status"] == "paid"]
        data["_customer"] = customer.id
        return data

    # The final checks share a read of their own: a live check's read, made while the episode was still
    # changing things, is never the final word.
    return _cached(ctx, "invoice:final" if final else "invoice", read)


def _intent_of(payment: dict[str, Any]) -> str | None:
    pi = (payment.get("payment") or {}).get("payment_intent")
    return pi.get("id") if isinstance(pi, dict) else pi


def _judged(check: Callable[[Any, dict[str, Any], Any], Any]) -> Callable[[Any, Any], Any]:
    def wrapped(ctx: Any, view: Any) -> Any:
        try:
            data = invoice(ctx, final=bool(view.final))
        except NoInvoice as exc:
            return failed(str(exc))
        return check(ctx, data, view)

    wrapped.__name__ = check.__name__
    wrapped.__doc__ = check.__doc__
    return wrapped


def _not_yet(view: Any, summary: str, **evidence: Any) -> Any:
    """Pending while the agent can still act; failed at the end."""
    return failed(summary, **evidence) if view.final else pending(summary, **evidence)


@_judged
def invoice_paid(ctx: Any, data: dict[str, Any], view: Any) -> Any:
    """The invoice ends ``paid``: amount_paid is its total and nothing remains."""
    evidence = {"invoice": data["id"], "status": data["status"], "amount_paid": data["amount_paid"],
                "amount_remaining": data["amount_remaining"], "total": data["amount_due"]}
    if data["status"] == "paid" and data["amount_paid"] == data["amount_due"] and data["amount_remaining"] == 0:
        if data.get("paid_out_of_band"):
            return failed("the invoice was marked paid out of band, not paid", **evidence)
        return passed(f"{data['id']} is paid: {data['amount_paid']} of {data['amount_due']}", **evidence)
    summary = (f"{data['id']} is {data['status']} with {data['amount_paid']} paid and {data['amount_remaining']} "
               "remaining")
    return _not_yet(view, summary, **evidence) if data["status"] == "open" else failed(summary, **evidence)


@_judged
def two_halves(ctx: Any, data: dict[str, Any], view: Any) -> Any:
    """Exactly two paid invoice payments: half the total rounded down, then what remained."""
    amounts = [p["amount_paid"] for p in data["_payments"]]
    evidence = {"invoice": data["id"], "expected": [FIRST, SECOND], "actual": amounts,
                "invoice_payments": [p["id"] for p in data["_payments"]]}
    if amounts == [FIRST, SECOND]:
        return passed(f"two invoice payments: {FIRST} then {SECOND}", **evidence)
    summary = f"the invoice's paid invoice payments are {amounts}, not [{FIRST}, {SECOND}]"
    if len(amounts) < 2 and data["status"] == "open" and all(a == FIRST for a in amounts):
        return _not_yet(view, summary, **evidence)
    return failed(summary, **evidence)


def _sessions_for(ctx: Any, pi_id: str) -> list[dict[str, Any]]:
    found = ctx.stripe.v1.checkout.sessions.list({"payment_intent": pi_id, "limit": 10}).data
    return [s.to_dict(recursive=True) for s in found]


def _completed(session: dict[str, Any]) -> bool:
    return (session.get("status"), session.get("payment_status"), session.get("mode")) == (
        "complete", "paid", "payment")


@_judged
def halves_checked_out(ctx: Any, data: dict[str, Any], view: Any) -> Any:
    """The member's customer completed two payment-mode Checkout Sessions, one for each half's amount (a session
    completes only when its page is paid, in the browser), whatever became of them afterwards."""
    found = ctx.stripe.v1.checkout.sessions.list({"customer": data["_customer"], "limit": 100}).data
    sessions = [s.to_dict(recursive=True) for s in reversed(found)]  # the list is newest first: ties stay in order
    done = sorted((s for s in sessions if _completed(s)), key=lambda s: s["created"])
    amounts = [s.get("amount_total") for s in done]
    evidence = {"expected": [FIRST, SECOND], "actual": amounts, "sessions": [s["id"] for s in done]}
    if amounts == [FIRST, SECOND]:
        return passed(f"two completed Checkout Sessions: {FIRST} then {SECOND}", **evidence)
    summary = f"the member's completed Checkout Sessions charged {amounts}, not [{FIRST}, {SECOND}]"
    if amounts in ([], [FIRST]):
        return _not_yet(view, summary, **evidence)
    return failed(summary, **evidence)


@_judged
def paid_through_checkout(ctx: Any, data: dict[str, Any], view: Any) -> Any:
    """Every payment the invoice took is the PaymentIntent of its own completed payment-mode Checkout Session for
    the member's customer, for that amount (none taken yet: pending, then failed)."""
    payments = data["_payments"]
    if not payments:
        return _not_yet(view, "the invoice has taken no payment", invoice=data["id"])
    problems, sessions = [], []
    for payment in payments:
        pi_id = _intent_of(payment)
        found = _sessions_for(ctx, pi_id) if pi_id else []
        if not found:
            problems.append(f"{payment['amount_paid']} ({pi_id}) was not paid through a Checkout Session")
            continue
        session = found[0]
        sessions.append(session["id"])
        if not _completed(session):
            problems.append(f"{session['id']} is {session.get('status')}/{session.get('payment_status')} in "
                            f"{session.get('mode')} mode")
        if session.get("customer") != data["_customer"]:
            problems.append(f"{session['id']} is for {session.get('customer')}, not the member's customer")
        if session.get("amount_total") != payment["amount_paid"]:
            problems.append(f"{session['id']} charged {session.get('amount_total')}, the payment is "
                            f"{payment['amount_paid']}")
    if len(set(sessions)) != len(sessions):
        problems.append("one Checkout Session stands behind several payments")
    if problems:
        return failed("; ".join(problems), invoice=data["id"], sessions=sessions)
    return passed(f"the invoice's {len(payments)} payment(s) came through Checkout: {', '.join(sessions)}",
                  invoice=data["id"], sessions=sessions)


def _invoice_events(ctx: Any, invoice_id: str) -> list[dict[str, Any]]:
    out = []
    for kind in ("invoice.updated", "invoice.paid"):
        for found in ctx.stripe.v1.events.list({"type": kind, "limit": 100}).data:
            event = found.to_dict(recursive=True)
            obj = (event.get("data") or {}).get("object") or {}
            if obj.get("id") == invoice_id:
                out.append({"type": event["type"], "created": event["created"], "status": obj.get("status"),
                            "amount_paid": obj.get("amount_paid"), "amount_remaining": obj.get("amount_remaining")})
    return out


@_judged
def remaining_after_first_half(ctx: Any, data: dict[str, Any], view: Any) -> Any:
    """The first half left the second one owing: Stripe's events show the invoice still open with the second half
    remaining once the first was attached, and (when paid) it was paid no earlier than its second payment."""
    events = _invoice_events(ctx, data["id"])
    between = [e for e in events if e["status"] == "open" and e["amount_paid"] == FIRST
               and e["amount_remaining"] == SECOND]
    evidence = {"invoice": data["id"], "expected_after_first": {"amount_paid": FIRST, "amount_remaining": SECOND},
                "seen": [{k: e[k] for k in ("type", "status", "amount_paid", "amount_remaining")} for e in events]}
    if not between:
        summary = f"no event shows the invoice open with {SECOND} remaining after a first half of {FIRST}"
        return _not_yet(view, summary, **evidence) if not data["_payments"] else failed(summary, **evidence)
    if data["status"] == "paid":
        paid_at = (data.get("status_transitions") or {}).get("paid_at") or 0
        last = max(((p.get("status_transitions") or {}).get("paid_at") or 0) for p in data["_payments"])
        if paid_at < last:
            return failed("the invoice was paid before its last payment", paid_at=paid_at, **evidence)
    return passed(f"open with {SECOND} remaining after the first half of {FIRST}", **evidence)


def _rows(ctx: Any) -> list[Any] | None:
    try:
        return ctx.db(DATABASE).execute(
            "SELECT stripe_invoice, checkout_session, payment_intent, amount, amount_remaining, status"
            " FROM payments ORDER BY id").fetchall()
    except Exception:  # noqa: BLE001 - no database or table: nothing recorded
        return None


@_judged
def app_recorded_halves(ctx: Any, data: dict[str, Any], view: Any) -> Any:
    """``desk.db`` records exactly the two halves the invoice took, in order: each with its Checkout Session, its
    PaymentIntent, its amount, what remained after it, and status paid; nothing that the invoice did not take."""
    rows = _rows(ctx)
    if rows is None:
        return failed("desk.db has no payments table")
    recorded = [{"invoice": r["stripe_invoice"], "session": r["checkout_session"], "payment_intent":
                 r["payment_intent"], "amount": r["amount"], "amount_remaining": r["amount_remaining"],
                 "status": r["status"]} for r in rows]
    taken = [_intent_of(p) for p in data["_payments"]]
    expected = [{"invoice": data["id"], "payment_intent": taken[i] if i < len(taken) else None, "amount": amount,
                 "amount_remaining": after, "status": "paid"}
                for i, (amount, after) in enumerate(((FIRST, SECOND), (SECOND, 0)))]
    actual = [{k: r[k] for k in ("invoice", "payment_intent", "amount", "amount_remaining", "status")}
              for r in recorded]
    evidence = {"expected": expected, "actual": actual}
    if actual == expected and all(r["session"] and r["session"].startswith("cs_") for r in recorded):
        return passed("desk.db records both halves with their PaymentIntents", **evidence)
    problems = []
    strays = [r["payment_intent"] for r in recorded if r["payment_intent"] not in taken]
    if strays:
        problems.append(f"recorded as paid but not payments of the invoice: {', '.join(map(str, strays))}")
    if len(recorded) != 2:
        problems.append(f"{len(recorded)} payment(s) recorded, not 2")
    summary = "; ".join(problems) or "the recorded halves differ from what the invoice took"
    if not view.final:  # the invoice read may be a moment older than the app's row: judged for good at the end
        return pending(summary, **evidence)
    return failed(summary, **evidence)


ON = ("invoice", "invoice_payment", "checkout.session", "payment_intent")
GRADER = Grader(
    (
        Criterion("invoice paid", 2.0, "The member's subscription invoice ends paid: amount_paid is its total and "
                  "amount_remaining 0 (not out of band).", invoice_paid, on=ON),
        Criterion("two halves", 2.0, f"The invoice holds exactly two paid invoice payments, {FIRST} then {SECOND} "
                  "(half the total rounded down, then what remained).", two_halves, on=ON),
        Criterion("halves checked out", 1.0, f"The member completed two payment-mode Checkout Sessions in the "
                  f"browser, for {FIRST} then {SECOND}.", halves_checked_out, on=ON),
        Criterion("payments came through checkout", 1.0, "Every payment the invoice took is the PaymentIntent of "
                  "its own completed Checkout Session for the member's customer, for that amount.",
                  paid_through_checkout, on=ON),
        Criterion("remaining after the first half", 1.0, f"Stripe's events show the invoice open with {SECOND} "
                  "remaining after the first half; it reached 0 only with the second.", remaining_after_first_half,
                  on=ON),
        Criterion("app recorded both halves", 1.0, "desk.db's payments table records the two halves the invoice "
                  "took (PaymentIntent, amount, what remained after each, paid) and nothing it did not take.",
                  app_recorded_halves, on=ON),
    ),
    description="The member's $1,249.99 yearly invoice paid in two halves through two Checkout Sessions, each "
                "attached to the invoice and recorded by the app.",
)
