"""Grader for idempotent-payments: replay payments under injected Stripe faults and count the charges.

Faults must not depend on an emulator-only control, so the grader brings its own: a small HTTP proxy
(``FaultProxy``) in front of the episode's Stripe backend (the emulator or api.stripe.com alike). It starts
a second copy of the agent's app with the manifest's service command, pointed at the proxy through
``STRIPE_API_BASE`` and given its own database file, then pays orders through the app's API while the proxy
answers some Stripe calls with 500/429, loses responses of calls that did reach Stripe, delays calls so
client retries overlap, or plays a full outage. Charges are counted through the Stripe API (succeeded
PaymentIntents whose metadata names the order). The proxy also records which key the app used and, for
restricted keys, refuses anything outside PaymentIntents the way Stripe refuses a key without the permission.
One criterion is also checked live: orders the episode's own app marked paid are charged exactly once.
"""

from __future__ import annotations

import secrets
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from stripebench_tui.grading import Criterion, Grader, Outcome, failed, passed, pending
from stripebench_tui.grading.app_copy import AppCopy
from stripebench_tui.grading.context import GradingUnavailable
from stripebench_tui.grading.once import once_per_context
from stripebench_tui.grading.scenarios import Miss, need, run_scenarios, scenario_criterion, with_run
from stripebench_tui.grading.stripe_proxy import Recorded, StripeProxy
from stripebench_tui.grading.stripe_proxy import api_key as _api_key  # noqa: F401 - named here by its tests

REAL_STRIPE = "https://api.stripe.com"
DB = "shop.db"  # the episode app's database, in the workspace
PAYMENT_PATH = "/v1/payment_intents"  # the calls faults apply to (and all a PaymentIntents-only key may reach)
MIN_BACKOFF = 0.1  # seconds between retries of one call that still count as backing off
# Timeouts only end a grading run that is truly stuck; a slow machine never comes near them.
APP_START_TIMEOUT = 120.0
PAY_TIMEOUT = 60.0
OUTAGE_ANSWER_WITHIN = 30.0  # PROBLEM.md asks for about 20 s; a little slack for slow machines


class FaultProxy(StripeProxy):
    """The shared Stripe proxy with faults on PaymentIntent POSTs and restricted keys kept to PaymentIntents."""

    def __init__(self, upstream: str) -> None:
        super().__init__(upstream, fault_path=PAYMENT_PATH, restricted_to=PAYMENT_PATH)

    def payments(self, order_id: str | None = None) -> list[Recorded]:
        """PaymentIntent POSTs seen so far (for ``order_id`` when given, matched by its metadata)."""
        rows = [s for s in self.requests() if s.method == "POST" and s.path.startswith(PAYMENT_PATH)]
        return [s for s in rows if order_id is None or s.form.get("metadata[order_id]") == order_id]


class Run:
    """The proxy, the app copy and the Stripe client of one grading run."""

    def __init__(self, ctx: Any) -> None:
        self.stripe = ctx.stripe.v1
        self.proxy = FaultProxy(ctx.stripe_api_base or REAL_STRIPE)
        try:
            self.app = AppCopy(ctx, stripe_api_base=self.proxy.url, start_timeout=APP_START_TIMEOUT,
                               http_timeout=PAY_TIMEOUT)
        except BaseException:
            self.proxy.close()
            raise
        self.tag = secrets.token_hex(4)

    def close(self) -> None:
        try:
            self.app.close()
        finally:
            self.proxy.close()

    def order(self, what: str, amount: int = 4200) -> str:
        response = self.app.http.post("/orders", json={"email": f"grader-{self.tag}-{what}@example.com",
                                                        "amount": amount, "currency": "usd"})
        need(response.status_code == 201, f"POST /orders answered {response.status_code}: {response.text[:200]}")
        return response.json()["id"]

    def pay(self, order_id: str, payment_method: str = "pm_card_visa") -> tuple[int, Any, float]:
        """POST /orders/<id>/pay; (status, JSON or text, seconds taken)."""
        start = time.monotonic()
        response = self.app.http.post(f"/orders/{order_id}/pay", json={"payment_method": payment_method})
        took = time.monotonic() - start
        try:
            return response.status_code, response.json(), took
        except ValueError:
            return response.status_code, response.text[:300], took

    def order_status(self, order_id: str) -> str | None:
        response = self.app.http.get(f"/orders/{order_id}")
        return response.json().get("status") if response.status_code == 200 else None

    def charges(self, order_id: str) -> list[Any]:
        """Succeeded PaymentIntents for ``order_id``: those the proxy saw answered plus recent ones listed by the API."""
        ids = {s.object_id for s in self.proxy.payments(order_id) if s.object_id and s.object_id.startswith("pi_")}
        for pi in self.stripe.payment_intents.list(params={"limit": 100}).data:
            if pi.metadata and pi.metadata.to_dict().get("order_id") == order_id:
                ids.add(pi.id)
        intents = [self.stripe.payment_intents.retrieve(i) for i in sorted(ids)]
        return [pi for pi in intents if pi.status == "succeeded"]

    def charged_once(self, order_id: str, amount: int = 4200) -> Any:
        """The one succeeded PaymentIntent of the order; Miss when there are none or several, or it is wrong."""
        got = self.charges(order_id)
        need(len(got) == 1, f"order {order_id} was charged {len(got)} times, expected exactly once",
             order=order_id, payment_intents=[p.id for p in got])
        pi = got[0]
        need(pi.amount == amount and pi.currency == "usd", f"{pi.id} charged {pi.amount} {pi.currency}, expected {amount} usd",
             payment_intent=pi.id)
        need(self.order_status(order_id) == "paid", f"order {order_id} is not 'paid' in the app", order=order_id)
        return pi


def _short(value: Any) -> Any:
    text = str(value)
    return value if len(text) <= 300 else text[:300] + "…"


# ---- scenarios ----

def pays(run: Run) -> Outcome:
    order = run.order("pays")
    status, body, _ = run.pay(order)
    need(status == 200 and isinstance(body, dict) and body.get("status") == "paid",
         f"paying an order answered {status} {_short(body)}; expected 200 with status paid")
    need(bool(run.proxy.payments(order)), "the app's Stripe calls did not go to STRIPE_API_BASE (the proxy saw none "
         "naming this order in metadata[order_id])", order=order)
    pi = run.charged_once(order)
    return passed("a payment charged the order once", order=order, payment_intent=pi.id)


def decline_then_pay(run: Run) -> Outcome:
    order = run.order("decline")
    status, body, _ = run.pay(order, "pm_card_chargeDeclined")
    err = body.get("error") if isinstance(body, dict) else None
    need(status == 402 and isinstance(err, dict) and err.get("decline_code") == "generic_decline",
         f"a declined card answered {status} {_short(body)}; expected 402 with decline_code generic_decline")
    need(run.order_status(order) != "paid", "the order is marked paid after a decline", order=order)
    status, body, _ = run.pay(order, "pm_card_visa")
    need(status == 200 and isinstance(body, dict) and body.get("status") == "paid",
         f"paying again with a good card after a decline answered {status} {_short(body)}; expected 200 paid")
    pi = run.charged_once(order)
    return passed("a decline answers 402; paying again with another card charges once", order=order,
                  payment_intent=pi.id)


def concurrent_duplicates(run: Run) -> Outcome:
    """Two requests to pay one order that overlap by construction, then a later retry.

    The proxy holds the first request's Stripe call until the duplicate's call has reached Stripe and been
    answered, so the duplicate is charged while the first is in flight, however loaded the machine. An app that
    answers the duplicate without calling Stripe (409, or it waits for the first) releases the hold when the
    grader gets that answer.
    """
    order = run.order("concurrent")
    with ThreadPoolExecutor(2) as pool, run.proxy.holding() as hold:
        first = pool.submit(run.pay, order)
        first.add_done_callback(lambda _done: hold.reached.set())  # answered without a Stripe call to hold
        hold.reached.wait()
        second = pool.submit(run.pay, order)
        second.add_done_callback(lambda _done: hold.release())
        answers = [first.result()[:2], second.result()[:2]]
    answers.append(run.pay(order)[:2])  # and a retry after both finished
    statuses = [s for s, _ in answers]
    need(all(s in (200, 409) for s in statuses) and statuses[-1] == 200,
         f"two overlapping requests and a later retry answered {statuses}; expected 200 (or 409 while in "
         f"flight) and 200 at the end", answers=[_short(b) for _, b in answers])
    pi = run.charged_once(order)
    return passed(f"overlapping duplicate requests ({statuses}) charged once", order=order, payment_intent=pi.id,
                  stripe_calls_overlapped=hold.overlapped)


def _same_key_retries(run: Run, order: str) -> list[Recorded]:
    calls = run.proxy.payments(order)
    for before, after in zip(calls, calls[1:]):
        if before.action in ("500", "429", "503", "lost") and after.path == before.path:
            need(bool(before.idempotency_key) and after.idempotency_key == before.idempotency_key,
                 f"a retry after {before.action} sent Idempotency-Key {after.idempotency_key!r}, the failed call sent "
                 f"{before.idempotency_key!r}", order=order)
    return calls


def transient_errors(run: Run) -> Outcome:
    order = run.order("transient")
    with run.proxy.faults(["500", "429"]):
        status, body, _ = run.pay(order)
    calls = _same_key_retries(run, order)
    actions = [c.action for c in calls]
    need(status == 200 and isinstance(body, dict) and body.get("status") == "paid",
         f"with Stripe answering 500 then 429 the payment answered {status} {_short(body)}; expected the app to "
         f"retry and answer 200 paid", stripe_calls=actions)
    # From the proxy's answer to the next call's arrival: the app's own wait, never shortened by a slow machine.
    gaps = [round(b.t - a.answered, 3) for a, b in zip(calls, calls[1:])]
    need(len(calls) >= 3 and all(g >= MIN_BACKOFF for g in gaps[:2]),
         f"retries came {gaps} s apart; expected a backoff of at least {MIN_BACKOFF} s", gaps=gaps)
    pi = run.charged_once(order)
    return passed("500 and 429 were retried with backoff and the same idempotency key", order=order,
                  payment_intent=pi.id, stripe_calls=actions, gaps=gaps)


def lost_response(run: Run) -> Outcome:
    order = run.order("lost")
    with run.proxy.faults(["lost"]):  # Stripe charges, but the app gets a 500
        status, body, _ = run.pay(order)
    calls = _same_key_retries(run, order)
    need(status == 200 and isinstance(body, dict) and body.get("status") == "paid",
         f"after a lost response the payment answered {status} {_short(body)}; expected a retry and 200 paid",
         stripe_calls=[c.action for c in calls])
    pi = run.charged_once(order)
    return passed("a charge whose response was lost was retried without charging twice", order=order,
                  payment_intent=pi.id)


def outage(run: Run) -> dict[str, Outcome]:
    """Stripe charges, then goes down: the app must give up cleanly; a later client retry must not charge again."""
    order = run.order("outage")
    out: dict[str, Outcome] = {}
    with run.proxy.faults(["lost"], down=True):
        status, body, took = run.pay(order)
    tries = len(run.proxy.payments(order))
    try:
        need(status >= 500, f"during a Stripe outage the payment answered {status} {_short(body)}; expected a 5xx "
             f"error", stripe_calls=tries)
        need(took <= OUTAGE_ANSWER_WITHIN, f"the app took {took:.1f} s to give up; expected an answer within "
             f"{OUTAGE_ANSWER_WITHIN:g} s", seconds=round(took, 2))
        need(run.order_status(order) != "paid", "the order is marked paid although the app never saw a success",
             order=order)
        need(tries >= 2, f"the app tried Stripe {tries} time(s) during the outage; expected retries", stripe_calls=tries)
        out["gives up on an outage"] = passed(f"answered {status} after {tries} tries in {took:.1f} s, order unpaid",
                                              order=order, seconds=round(took, 2))
    except Miss as miss:
        out["gives up on an outage"] = failed(miss.summary, **miss.evidence)
    try:
        status, body, _ = run.pay(order)
        need(status == 200 and isinstance(body, dict) and body.get("status") == "paid",
             f"the client's retry after the outage answered {status} {_short(body)}; expected 200 paid")
        pi = run.charged_once(order)
        out["client retry after an outage"] = passed("the order Stripe charged during the outage was not charged "
                                                     "again when the client retried", order=order, payment_intent=pi.id)
    except Miss as miss:
        out["client retry after an outage"] = failed(miss.summary, **miss.evidence)
    return out


def restricted_key(run: Run) -> Outcome:
    seen = list(run.proxy.seen)
    need(bool(seen), "the app sent no Stripe request through STRIPE_API_BASE")
    kinds = sorted({s.key_kind for s in seen})
    need(kinds == ["rk_test"] or kinds == ["rk_live"], f"the app called Stripe with {kinds} keys; expected only its "
         f"restricted key (STRIPE_RESTRICTED_KEY)", key_kinds=kinds)
    refused = sorted({f"{s.method} {s.path}" for s in seen if s.action == "refused"})
    need(not refused, f"the app called endpoints a PaymentIntents-only key may not use: {refused}", refused=refused)
    return passed("every Stripe call used the restricted key, within PaymentIntents",
                  key_kinds=kinds, calls=len(seen))


SCENARIOS: list[tuple[tuple[str, ...], Callable[[Run], Any]]] = [
    (("pays an order",), pays),
    (("decline then pay",), decline_then_pay),
    (("overlapping duplicates",), concurrent_duplicates),
    (("retries 500 and 429",), transient_errors),
    (("lost response",), lost_response),
    (("gives up on an outage", "client retry after an outage"), outage),
    (("restricted key",), restricted_key),
]
CRITERIA: list[tuple[str, float, str]] = [
    ("pays an order", 1, "POST /orders/<id>/pay with a good card answers 200 paid and charges the order exactly once "
     "(a succeeded PaymentIntent for its amount, metadata order_id)."),
    ("decline then pay", 1, "A declined card answers 402 with the decline code and leaves the order unpaid; paying "
     "again with a good card then charges it once (a new attempt is not mistaken for a duplicate)."),
    ("overlapping duplicates", 2, "Two overlapping requests to pay the same order, and a later retry, charge it "
     "exactly once."),
    ("retries 500 and 429", 2, "When Stripe answers 500 and then 429 the app retries, with backoff and the same "
     "idempotency key, and the payment succeeds once."),
    ("lost response", 2, "When a charge reaches Stripe but its response is lost, the app's retry does not charge "
     "again."),
    ("gives up on an outage", 1, "During a Stripe outage the app retries, then answers a 5xx error in reasonable "
     "time and does not mark the order paid."),
    ("client retry after an outage", 2, "A client retrying after the outage (when Stripe had in fact charged) gets "
     "200 paid without a second charge: the idempotency key comes from the order, not the request."),
    ("restricted key", 2, "Every Stripe call uses the restricted key (PaymentIntents only), never the full secret "
     "key."),
]


def _results(ctx: Any) -> dict[str, Outcome]:
    """Run every scenario once per grading context, in order, and remember each criterion's outcome."""
    return once_per_context(ctx, "idempotent-payments", lambda: with_run(
        ctx, Run, [name for name, _, _ in CRITERIA], lambda run: run_scenarios(run, SCENARIOS)))


def paid_orders_charged_once(ctx: Any, view: Any) -> Outcome:
    """Live and final: each order the episode's app marked paid has exactly one succeeded PaymentIntent."""
    try:
        conn = ctx.db(DB)
    except GradingUnavailable as exc:
        return pending(f"no database yet: {exc}")
    try:
        paid = [dict(r) for r in conn.execute("SELECT id, amount, payment_intent FROM orders WHERE status = 'paid'")]
    finally:
        conn.close()
    if not paid:
        return pending("no paid orders yet")
    by_order: dict[str, list[str]] = {}
    for pi in ctx.stripe.v1.payment_intents.list(params={"limit": 100}).data:
        order_id = pi.metadata.to_dict().get("order_id") if pi.metadata else None
        if order_id and pi.status == "succeeded":
            by_order.setdefault(order_id, []).append(pi.id)
    problems = [f"{o['id']} has {len(by_order.get(o['id'], []))} succeeded PaymentIntents "
                f"{by_order.get(o['id'], [])}, its row names {o['payment_intent']}" for o in paid
                if len(by_order.get(o["id"], [])) != 1 or o["payment_intent"] not in by_order.get(o["id"], [])]
    if problems:
        return failed(f"{len(problems)} of {len(paid)} paid orders are not charged exactly once: {problems[0]}",
                      problems=problems[:10])
    return passed(f"each of the {len(paid)} paid orders has exactly one succeeded PaymentIntent", orders=len(paid))


GRADER = Grader(
    criteria=tuple(scenario_criterion(*c, _results) for c in CRITERIA) + (
        Criterion("paid orders charged once", 1, "In the running app's own database, every order marked paid has "
                  "exactly one succeeded PaymentIntent (metadata order_id), the one its row names. Checked live as "
                  "payments appear, and at the end.", paid_orders_charged_once, on=("payment_intent", "charge")),
    ),
    description="Starts a copy of the app behind a fault-injecting Stripe proxy, replays payments under 500/429, "
                "lost responses, overlap and an outage, and counts the charges per order.",
)
