"""Grader for bookings-payments: the grader books and refunds over HTTP, then reads the database and Stripe.

The scenarios run once, at the end, one after the other (so concurrent checks never race on the app's
SQLite file); each of their criteria reports the outcome of its own scenario. One more criterion, "bookings
match Stripe", is checked live as Stripe objects appear and again after the scenarios. The grader only uses the
app's public API, its database file and the Stripe API, so it runs unchanged against real Stripe test mode.
"""

from __future__ import annotations

import secrets
from typing import Any, Callable

import stripe

from stripebench_tui.grading import Criterion, Grader, Outcome, failed, passed, pending
from stripebench_tui.grading.context import GradingUnavailable
from stripebench_tui.grading.once import once_per_context
from stripebench_tui.grading.scenarios import need, run_scenarios, scenario_criterion, with_run

DB = "bookings.db"
CLASS_ID = "reformer-pilates"


class Run:
    """One grading run: the app client, the database, Stripe and a tag that keeps this run's emails apart."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.http = ctx.http("APP_URL")
        self.stripe = ctx.stripe.v1
        self.tag = secrets.token_hex(4)
        row = self.query("SELECT * FROM classes WHERE id = ?", CLASS_ID)
        if not row:
            raise GradingUnavailable(f"the classes table has no {CLASS_ID!r} row")
        self.cls = row[0]

    def email(self, what: str) -> str:
        return f"grader-{self.tag}-{what}@example.com"

    def query(self, sql: str, *args: Any) -> list[dict[str, Any]]:
        conn = self.ctx.db(DB)
        try:
            return [dict(r) for r in conn.execute(sql, args).fetchall()]
        finally:
            conn.close()

    def row(self, booking_id: str) -> dict[str, Any] | None:
        rows = self.query("SELECT * FROM bookings WHERE id = ?", booking_id)
        return rows[0] if rows else None

    def post(self, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        """POST JSON; (status, parsed body or the raw text)."""
        response = self.http.post(path, json=body)
        try:
            return response.status_code, response.json()
        except ValueError:
            return response.status_code, response.text[:300]

    def book(self, what: str, amount: int, payment_method: str = "pm_card_visa", channel: str = "web") -> tuple[int, Any, str]:
        email = self.email(what)
        status, body = self.post("/bookings", {"class_id": CLASS_ID, "email": email, "payment_method": payment_method,
                                               "amount": amount, "channel": channel})
        return status, body, email

    def booked(self, what: str, amount: int, channel: str = "web") -> dict[str, Any]:
        """Book with a good card; Miss unless the app answers 201 with a booking id."""
        status, body, email = self.book(what, amount, channel=channel)
        need(status == 201 and isinstance(body, dict) and isinstance(body.get("id"), str),
             f"POST /bookings (amount {amount}) answered {status}, expected 201 with the booking",
             status=status, body=_short(body))
        return body

    def refunds_of(self, payment_intent: str) -> list[dict[str, Any]]:
        page = self.stripe.refunds.list(params={"payment_intent": payment_intent, "limit": 100})
        return [r for r in page.data if r.status in ("succeeded", "pending")]


def _short(body: Any) -> Any:
    text = str(body)
    return body if len(text) <= 400 else text[:400] + "…"


def _check_payment(run: Run, booking: dict[str, Any], amount: int, status: str) -> dict[str, Any]:
    """The row, the response and the PaymentIntent all agree on a charge of ``amount``; returns evidence."""
    row = run.row(booking["id"])
    need(row is not None, "the booking is not in the bookings table", booking=booking["id"])
    need(row["status"] == status and row["amount_paid"] == amount,
         f"the row says status {row['status']!r}, amount_paid {row['amount_paid']}; expected {status!r}, {amount}",
         booking=booking["id"])
    pi_id = row["payment_intent"]
    need(isinstance(pi_id, str) and pi_id.startswith("pi_"), "the row names no PaymentIntent", row=row)
    pi = run.stripe.payment_intents.retrieve(pi_id)
    need(pi.status == "succeeded", f"PaymentIntent {pi_id} is {pi.status}, not succeeded", payment_intent=pi_id)
    need(pi.amount == amount and pi.amount_received == amount and pi.currency == run.cls["currency"],
         f"PaymentIntent {pi_id} is for {pi.amount} {pi.currency} (received {pi.amount_received}); expected {amount}",
         payment_intent=pi_id, expected=amount, actual=pi.amount)
    meta = pi.metadata.to_dict() if pi.metadata else {}
    need(meta.get("booking_id") == booking["id"] and meta.get("class_id") == CLASS_ID,
         f"PaymentIntent {pi_id} metadata is {meta}; expected booking_id and class_id", payment_intent=pi_id)
    need(pi.customer is not None and pi.customer == row["customer"],
         f"PaymentIntent {pi_id} customer is {pi.customer}, the row says {row['customer']}", payment_intent=pi_id)
    got = run.http.get(f"/bookings/{booking['id']}")
    need(got.status_code == 200 and got.json().get("status") == status,
         f"GET /bookings/{booking['id']} answered {got.status_code} {got.text[:200]}")
    return {"booking": booking["id"], "payment_intent": pi_id, "amount": amount}


# ---- scenarios, one per criterion ----

def full_payment(run: Run) -> Outcome:
    price = run.cls["price"]
    booking = run.booked("full", price)
    return passed(f"a full booking charged {price} through a PaymentIntent", **_check_payment(run, booking, price, "paid"))


def deposit(run: Run) -> Outcome:
    amount = run.cls["min_deposit"]
    booking = run.booked("deposit", amount)
    return passed(f"a deposit charged {amount} of {run.cls['price']}",
                  **_check_payment(run, booking, amount, "deposit_paid"))


def save_card(run: Run) -> Outcome:
    booking = run.booked("save", 0)
    row = run.row(booking["id"])
    need(row is not None, "the booking is not in the bookings table", booking=booking["id"])
    need(row["status"] == "card_saved" and row["amount_paid"] == 0 and not row["payment_intent"],
         f"the row says status {row['status']!r}, amount_paid {row['amount_paid']}, payment_intent "
         f"{row['payment_intent']!r}; expected card_saved, 0 and none", booking=booking["id"])
    seti_id = row["setup_intent"]
    need(isinstance(seti_id, str) and seti_id.startswith("seti_"), "the row names no SetupIntent", row=row)
    seti = run.stripe.setup_intents.retrieve(seti_id)
    need(seti.status == "succeeded", f"SetupIntent {seti_id} is {seti.status}, not succeeded", setup_intent=seti_id)
    need(seti.customer is not None and seti.customer == row["customer"],
         f"SetupIntent {seti_id} customer is {seti.customer}, the row says {row['customer']}", setup_intent=seti_id)
    pm = run.stripe.payment_methods.retrieve(seti.payment_method)
    need(pm.customer == row["customer"], f"payment method {pm.id} is attached to {pm.customer}, not {row['customer']}",
         payment_method=pm.id)
    charged = [p.id for p in run.stripe.payment_intents.list(params={"customer": row["customer"], "limit": 100}).data
               if p.status == "succeeded"]
    need(not charged, f"the customer of a zero-amount booking was charged: {charged}", payment_intents=charged)
    return passed("a zero-amount booking saved the card with a SetupIntent and charged nothing",
                  booking=booking["id"], setup_intent=seti_id, payment_method=pm.id, customer=row["customer"])


DECLINES = [("pm_card_chargeDeclined", "generic_decline"),
            ("pm_card_visa_chargeDeclinedInsufficientFunds", "insufficient_funds")]


def declines(run: Run) -> Outcome:
    seen = []
    for n, (pm, decline_code) in enumerate(DECLINES):
        status, body, email = run.book(f"decline{n}", run.cls["price"], payment_method=pm)
        err = body.get("error") if isinstance(body, dict) else None
        need(status == 402, f"a {pm} booking answered {status}, expected 402", body=_short(body))
        need(isinstance(err, dict) and err.get("decline_code") == decline_code and bool(err.get("message")),
             f"a {pm} booking's error is {_short(err)}; expected decline_code {decline_code!r} and Stripe's message",
             body=_short(body))
        rows = run.query("SELECT id, status FROM bookings WHERE email = ?", email)
        need(not rows, f"a declined {pm} booking still left rows in the bookings table: {rows}", rows=rows)
        seen.append({"payment_method": pm, "decline_code": err.get("decline_code"), "message": err.get("message")})
    return passed("declines answer 402 with the card error and create no booking", declines=seen)


def refunds(run: Run) -> Outcome:
    price, part = run.cls["price"], run.cls["min_deposit"]
    booking = run.booked("refund", price)
    pi_id = booking.get("payment_intent") or (run.row(booking["id"]) or {}).get("payment_intent")
    need(bool(pi_id), "the booking names no PaymentIntent", booking=booking["id"])
    status, body = run.post(f"/bookings/{booking['id']}/refund", {"amount": part})
    need(status == 200, f"a partial refund answered {status}, expected 200", body=_short(body))
    got = run.refunds_of(pi_id)
    need(sum(r.amount for r in got) == part, f"Stripe has refunds {[(r.id, r.amount) for r in got]} on {pi_id}; "
         f"expected {part} refunded", payment_intent=pi_id)
    row = run.row(booking["id"])
    need(row and row["amount_refunded"] == part and row["status"] == "partially_refunded",
         f"after a partial refund the row says {row and (row['status'], row['amount_refunded'])}", booking=booking["id"])
    status, body = run.post(f"/bookings/{booking['id']}/refund", {})
    need(status == 200, f"refunding the rest answered {status}, expected 200", body=_short(body))
    got = run.refunds_of(pi_id)
    need(sum(r.amount for r in got) == price, f"Stripe has refunds {[(r.id, r.amount) for r in got]}; expected "
         f"{price} refunded in all", payment_intent=pi_id)
    row = run.row(booking["id"])
    need(row and row["amount_refunded"] == price and row["status"] == "refunded",
         f"after a full refund the row says {row and (row['status'], row['amount_refunded'])}", booking=booking["id"])
    return passed("a partial refund then the rest: Stripe refunds and the row agree",
                  booking=booking["id"], payment_intent=pi_id, refunds=[r.id for r in got])


def over_refund(run: Run) -> Outcome:
    price, part = run.cls["price"], run.cls["min_deposit"]
    booking = run.booked("overrefund", part)
    pi_id = (run.row(booking["id"]) or {}).get("payment_intent")
    need(bool(pi_id), "the booking names no PaymentIntent", booking=booking["id"])
    status, body = run.post(f"/bookings/{booking['id']}/refund", {"amount": price})
    need(400 <= status < 500, f"refunding {price} of a {part} deposit answered {status}, expected a 4xx error",
         body=_short(body))
    got = run.refunds_of(pi_id)
    need(not got, f"Stripe has refunds {[(r.id, r.amount) for r in got]} after a refused refund", payment_intent=pi_id)
    row = run.row(booking["id"])
    need(row and row["amount_refunded"] == 0 and row["status"] == "deposit_paid",
         f"a refused refund changed the row to {row and (row['status'], row['amount_refunded'])}", booking=booking["id"])
    return passed(f"a refund beyond what was paid is refused ({status}) and changes nothing", booking=booking["id"])


def partner(run: Run) -> Outcome:
    booking = run.booked("partner", run.cls["price"], channel="partner")
    pi_id = (run.row(booking["id"]) or {}).get("payment_intent")
    need(bool(pi_id), "the partner booking names no PaymentIntent", booking=booking["id"])
    status, body = run.post(f"/bookings/{booking['id']}/refund", {})
    err = body.get("error") if isinstance(body, dict) else None
    need(status == 409 and isinstance(err, dict) and bool(err.get("message")),
         f"refunding a partner booking answered {status} {_short(body)}; expected 409 with an error message")
    got = run.refunds_of(pi_id)
    need(not got, f"Stripe has refunds {[r.id for r in got]} for a partner booking", payment_intent=pi_id)
    row = run.row(booking["id"])
    need(row and row["amount_refunded"] == 0 and row["status"] == "paid",
         f"the refused refund changed the row to {row and (row['status'], row['amount_refunded'])}", booking=booking["id"])
    return passed("a partner booking's refund is refused with 409 and no Stripe refund", booking=booking["id"],
                  message=err.get("message"))


SCENARIOS: list[tuple[str, float, str, Callable[[Run], Outcome]]] = [
    ("full payment", 2, "Booking with the full price charges it with a PaymentIntent (succeeded, right amount, "
     "customer, booking_id and class_id metadata) and stores a paid booking.", full_payment),
    ("deposit", 1, "Booking with a partial amount charges exactly that amount and stores a deposit_paid booking.",
     deposit),
    ("save card only", 2, "Booking with amount 0 charges nothing: a succeeded SetupIntent saves the card on the "
     "booking's customer and the booking is card_saved.", save_card),
    ("declines", 2, "Declined cards (generic and insufficient funds) answer 402 with Stripe's decline code and "
     "message, and leave no booking row.", declines),
    ("refunds", 2, "A partial refund and then a refund of the rest create Stripe refunds of those amounts and "
     "update the booking.", refunds),
    ("over-refund refused", 1, "Refunding more than was paid is refused with a 4xx error; no Stripe refund, the "
     "booking unchanged.", over_refund),
    ("partner refunds refused", 1, "Refunding a booking made through the partner channel answers 409 with an "
     "error and creates no Stripe refund.", partner),
]


def _results(ctx: Any) -> dict[str, Outcome]:
    """Run every scenario once per grading context (in order) and remember the outcomes."""
    return once_per_context(ctx, "bookings-payments", lambda: with_run(
        ctx, Run, [name for name, _, _, _ in SCENARIOS], _run_scenarios))


def _run_scenarios(run: Run) -> dict[str, Outcome]:
    return run_scenarios(run, [((name,), scenario) for name, _, _, scenario in SCENARIOS])


PAID_STATES = ("paid", "deposit_paid", "partially_refunded", "refunded")


def ledger(ctx: Any, view: Any) -> Outcome:
    """Live and final: every booking row agrees with Stripe (charge, saved card, refunds)."""
    if view.final:
        _results(ctx)  # the scenarios write bookings too: judge the table once they are done
    try:
        conn = ctx.db(DB)
    except GradingUnavailable as exc:
        return pending(f"no database yet: {exc}")
    try:
        rows = [dict(r) for r in conn.execute("SELECT * FROM bookings ORDER BY created_at DESC LIMIT 40").fetchall()]
    finally:
        conn.close()
    if not rows:
        return pending("no bookings yet")
    api, problems = ctx.stripe.v1, []
    for row in rows:
        try:
            if row["status"] in PAID_STATES:
                pi = api.payment_intents.retrieve(row["payment_intent"] or "")
                refunded = sum(r.amount for r in api.refunds.list(params={"payment_intent": pi.id, "limit": 100}).data
                               if r.status in ("succeeded", "pending"))
                if pi.status != "succeeded" or pi.amount_received != row["amount_paid"]:
                    problems.append(f"{row['id']}: {row['amount_paid']} paid but {pi.id} is {pi.status} with "
                                    f"{pi.amount_received} received")
                elif refunded != row["amount_refunded"]:
                    problems.append(f"{row['id']}: {row['amount_refunded']} refunded but Stripe refunded {refunded}")
            elif row["status"] == "card_saved":
                seti = api.setup_intents.retrieve(row["setup_intent"] or "")
                if seti.status != "succeeded" or seti.customer != row["customer"]:
                    problems.append(f"{row['id']}: card_saved but {seti.id} is {seti.status} for {seti.customer}")
            else:
                problems.append(f"{row['id']}: status {row['status']!r} is not a booking state")
        except stripe.StripeError as exc:
            problems.append(f"{row['id']}: {type(exc).__name__}: {exc.user_message or exc}")
    if problems:
        return failed(f"{len(problems)} of {len(rows)} bookings disagree with Stripe: {problems[0]}", problems=problems[:10])
    return passed(f"all {len(rows)} bookings agree with Stripe", bookings=len(rows))


GRADER = Grader(
    criteria=tuple(scenario_criterion(name, weight, description, _results) for name, weight, description, _ in SCENARIOS) + (
        Criterion("bookings match Stripe", 1, "Every booking row agrees with Stripe: paid amounts with succeeded "
                  "PaymentIntents, refunded amounts with refunds, saved cards with succeeded SetupIntents, and no "
                  "row in any other state. Checked live as Stripe objects appear, and at the end.", ledger,
                  on=("payment_intent", "setup_intent", "refund", "charge")),
    ),
    description="Books, declines and refunds through the app's API, then checks the bookings table and Stripe.",
)
