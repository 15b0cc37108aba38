"""Grader for subscription-gym: each business model is signed up through the app, runs on its own test clock and
is judged by its invoices.

Public means only (the same run works against Stripe test mode): for every model the grader creates a test clock
frozen at ``T0`` and a customer on it with a default card, registers that customer as a company through the app
(``POST /accounts``), signs it up for the model's plan (``POST /signup``), reads the app's database (``plans.db``)
for the subscription it recorded, then advances the clock (waiting for ``status=ready``, as Stripe's clocks advance
asynchronously) through the months the model is about and reads the subscription and its invoices through the
API: statuses, totals, billing reasons, line quantities. The upgrade model's mid-cycle move goes through
``POST /accounts/<id>/upgrade``. Each model is one criterion of equal weight, so the score is the fraction of
models configured right. The clocks are deleted afterwards.
"""

from __future__ import annotations

import calendar
import secrets
import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from typing import Any, Callable

from stripebench_tui.core.events import SOURCE_HEADER
from stripebench_tui.grading import Grader, Outcome, passed
from stripebench_tui.grading.context import GradingUnavailable
from stripebench_tui.grading.once import once_per_context
from stripebench_tui.grading.scenarios import Miss, need, run_scenarios, scenario_criterion, with_run

DB = "plans.db"
T0 = int(datetime(2026, 1, 10, 12, tzinfo=timezone.utc).timestamp())
DAY = 86400
RENEWAL_SLACK = 7200  # Stripe finalises and charges a renewal about an hour after the period ends
CENT_TOLERANCE = 2  # proration rounding may differ by a cent
# Only a stuck clock takes this long, also on a loaded machine.
CLOCK_TIMEOUT = 300.0


def months_after(moment: int, months: int) -> int:
    """``moment`` plus whole calendar months (the day clamped to the month's length, like Stripe's periods)."""
    when = datetime.fromtimestamp(moment, timezone.utc)
    year, month = divmod(when.month - 1 + months, 12)
    year, month = when.year + year, month + 1
    return int(when.replace(year=year, month=month, day=min(when.day, calendar.monthrange(year, month)[1]))
               .timestamp())


def _short(body: Any) -> str:
    text = str(body)
    return text if len(text) <= 300 else text[:300] + "…"


class Run:
    """One grading run: the Stripe client, the catalogue, the app over HTTP and its database."""

    def __init__(self, ctx: Any) -> None:
        import requests
        import stripe

        self.ctx = ctx
        self.http = ctx.http("APP_URL")
        self.tag = secrets.token_hex(4)  # keeps this run's companies apart from earlier runs'
        # Our own client: a model's thread sits idle while the app works, longer than a server keeps an idle
        # connection open, and the next call must not fail on that closed connection. Retried POSTs carry an
        # idempotency key (the SDK adds one), so a retry never makes a second object. Its header tells the
        # episode's request log that the grader asked, not the app.
        base = {"api": ctx.stripe_api_base} if ctx.stripe_api_base else None
        session = requests.Session()
        session.headers[SOURCE_HEADER] = "grader"
        self.stripe = stripe.StripeClient(ctx.stripe_api_key, base_addresses=base, max_network_retries=2,
                                          http_client=stripe.RequestsClient(session=session)).v1
        self.clocks: list[str] = []  # appended to by the models' threads (list.append is atomic)
        self.prices = {p.lookup_key: p for p in self.stripe.prices.list(params={
            "lookup_keys": ["gym_starter_monthly", "gym_pro_monthly", "gym_pro_annual", "gym_api_calls",
                            "gym_setup_fee"], "active": True}).data}
        try:  # no database, or one without the subscriptions table: nothing can be graded
            self.query("SELECT 1 FROM subscriptions LIMIT 1")
        except sqlite3.Error as exc:
            raise GradingUnavailable(f"the app's database {DB} cannot be read: {exc}") from None

    def close(self) -> None:
        for clock in self.clocks:  # deleting a clock deletes its customers and subscriptions
            try:
                self.stripe.test_helpers.test_clocks.delete(clock)
            except Exception:  # noqa: BLE001 - cleanup only
                pass

    def query(self, sql: str, *args: Any) -> list[dict[str, Any]]:
        """Rows of the app's database (read-only)."""
        conn = self.ctx.db(DB)
        try:
            return [dict(r) for r in conn.execute(sql, args).fetchall()]
        finally:
            conn.close()

    def post(self, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
        """POST JSON to the app; (status, parsed body or the raw text)."""
        response = self.http.post(path, json=body or {})
        try:
            return response.status_code, response.json()
        except ValueError:
            return response.status_code, response.text[:300]

    def start(self, model: str) -> tuple[str, Any, str]:
        """A clock, a customer and an account for ``model``, signed up through the app; (clock, subscription,
        account id)."""
        clock = self.stripe.test_helpers.test_clocks.create(params={"frozen_time": T0, "name": f"gym {model}"})
        self.clocks.append(clock.id)
        customer = self.stripe.customers.create(params={
            "test_clock": clock.id, "email": f"{model}-{self.tag}@gym.example", "payment_method": "pm_card_visa",
            "invoice_settings": {"default_payment_method": "pm_card_visa"}})
        status, account = self.post("/accounts", {"company": f"Gym {model} {self.tag}",
                                                  "email": f"{model}-{self.tag}@gym.example",
                                                  "stripe_customer": customer.id})
        need(status == 201 and isinstance(account, dict) and isinstance(account.get("id"), str),
             f"POST /accounts answered {status}, expected 201 with the account: {_short(account)}")
        status, body = self.post("/signup", {"account": account["id"], "plan": model})
        need(status == 201, f"POST /signup for plan {model} answered {status}, expected 201: {_short(body)}",
             account=account["id"])
        rows = self.query("SELECT plan, stripe_subscription, status FROM subscriptions WHERE account_id = ?",
                          account["id"])
        need(len(rows) == 1 and rows[0]["plan"] == model,
             f"after the signup the subscriptions table has {rows} for the account; expected one {model} row",
             account=account["id"])
        sub_id = rows[0]["stripe_subscription"]
        need(isinstance(sub_id, str) and sub_id.startswith("sub_"),
             f"the app answered {status} but recorded no Stripe subscription for plan {model} "
             f"(stripe_subscription {sub_id!r}): {_short(body)}", account=account["id"])
        sub = self.subscription(sub_id)
        need(sub.customer == customer.id, f"{sub_id} belongs to {sub.customer}, not the account's customer")
        need(rows[0]["status"] == sub.status,
             f"the app recorded status {rows[0]['status']!r} for {sub_id}; Stripe says {sub.status!r}",
             subscription=sub_id)
        return clock.id, sub, account["id"]

    def advance(self, clock: str, to: int) -> None:
        """Advance and wait until the clock is ready again."""
        self.stripe.test_helpers.test_clocks.advance(clock, params={"frozen_time": to})
        deadline = time.monotonic() + CLOCK_TIMEOUT
        while self.stripe.test_helpers.test_clocks.retrieve(clock).status != "ready":
            need(time.monotonic() < deadline, f"test clock {clock} did not finish advancing")
            time.sleep(0.5)  # Stripe advances clocks in the background; the emulator is ready at once

    def subscription(self, sub_id: str) -> Any:
        return self.stripe.subscriptions.retrieve(sub_id)

    def invoices(self, sub_id: str) -> list[Any]:
        """The subscription's invoices, oldest first, with their lines."""
        rows = self.stripe.invoices.list(params={"subscription": sub_id, "limit": 100}).data
        return list(reversed(rows))

    def price(self, key: str) -> Any:
        need(key in self.prices, f"the catalogue has no price {key} (seed not run?)")
        return self.prices[key]


def _paid(invoices: list[Any]) -> list[int]:
    return [i.amount_paid for i in invoices if i.status == "paid"]


def _items(sub: Any) -> list[Any]:
    return sub["items"].data


def trial_14(run: Run) -> Outcome:
    clock, sub, _ = run.start("trial_14")
    need(sub.status == "trialing" and sub.trial_end == T0 + 14 * DAY,
         f"expected a trial until {T0 + 14 * DAY}, got status {sub.status} trial_end {sub.trial_end}")
    run.advance(clock, T0 + 14 * DAY + RENEWAL_SLACK)
    sub, invoices = run.subscription(sub.id), run.invoices(sub.id)
    need(sub.status == "active", f"after the trial the subscription is {sub.status}")
    need(_paid(invoices) == [0, 2000], f"paid invoices {_paid(invoices)}, expected [0, 2000] (trial, then Starter)")
    return passed("trialing 14 days, then $20.00 charged", subscription=sub.id)


def anchor_first(run: Run) -> Outcome:
    clock, sub, _ = run.start("anchor_first")
    anchor = sub.billing_cycle_anchor
    day = datetime.fromtimestamp(anchor, timezone.utc).day
    need(day == 1 and T0 < anchor <= T0 + 32 * DAY, f"billing_cycle_anchor {anchor} is not the coming 1st")
    first = run.invoices(sub.id)
    full = anchor - months_after(anchor, -1)
    expected = round(2000 * (anchor - T0) / full)
    need(len(first) == 1 and abs(first[0].amount_paid - expected) <= CENT_TOLERANCE,
         f"first invoice paid {[i.amount_paid for i in first]}, expected about {expected} (the partial month)")
    run.advance(clock, anchor + RENEWAL_SLACK)
    paid = _paid(run.invoices(sub.id))
    need(paid[1:] == [2000], f"on the 1st the invoices paid are {paid}, expected a full $20.00 after the first")
    return passed(f"anchored on the 1st, first period {expected} cents", subscription=sub.id)


def coupon_3_months(run: Run) -> Outcome:
    clock, sub, _ = run.start("coupon_3_months")
    for month in (1, 2, 3):
        run.advance(clock, months_after(T0, month) + RENEWAL_SLACK)
    paid = _paid(run.invoices(sub.id))
    need(paid == [3750, 3750, 3750, 5000], f"paid {paid}, expected three months at $37.50 then $50.00")
    return passed("25% off for three months, then full price", subscription=sub.id)


def annual(run: Run) -> Outcome:
    _, sub, _ = run.start("annual")
    item = _items(sub)[0]
    need(item.price.id == run.price("gym_pro_annual").id, f"the item's price is {item.price.id}, not the annual one")
    need(item.current_period_end == months_after(T0, 12), f"the period ends {item.current_period_end}, not a year on")
    need(_paid(run.invoices(sub.id)) == [50000], f"paid {_paid(run.invoices(sub.id))}, expected [50000]")
    return passed("$500.00 for a year", subscription=sub.id)


def usage(run: Run) -> Outcome:
    clock, sub, _ = run.start("usage")
    meter = run.price("gym_api_calls").recurring.meter
    need(_items(sub)[0].price.id == run.price("gym_api_calls").id, "the item is not the metered API-call price")
    run.advance(clock, T0 + 2 * DAY)
    event_name = run.stripe.billing.meters.retrieve(meter).event_name
    for value, when in (("1000", T0 + DAY), ("234", T0 + 2 * DAY - 60)):
        run.stripe.billing.meter_events.create(params={"event_name": event_name, "timestamp": when,
                                                       "payload": {"stripe_customer_id": sub.customer,
                                                                   "value": value}})
    run.advance(clock, months_after(T0, 1) + RENEWAL_SLACK)
    invoices = run.invoices(sub.id)
    last = invoices[-1]
    lines = [(line.quantity, line.amount) for line in last.lines.data]
    need(last.status == "paid" and last.total == 2468 and (1234, 2468) in lines,
         f"the month's invoice is {last.status} for {last.total} with lines {lines}; expected 1234 calls = $24.68")
    return passed("1234 calls billed at the end of the month", subscription=sub.id)


def seats(run: Run) -> Outcome:
    _, sub, _ = run.start("seats")
    item = _items(sub)[0]
    need((item.price.id, item.quantity) == (run.price("gym_pro_monthly").id, 5),
         f"the item is {item.price.id} × {item.quantity}, expected Pro × 5")
    need(_paid(run.invoices(sub.id)) == [25000], f"paid {_paid(run.invoices(sub.id))}, expected [25000]")
    return passed("5 Pro seats, $250.00", subscription=sub.id)


def setup_fee(run: Run) -> Outcome:
    clock, sub, _ = run.start("setup_fee")
    first = run.invoices(sub.id)[0]
    amounts = sorted(line.amount for line in first.lines.data)
    need(first.amount_paid == 11900 and amounts == [2000, 9900],
         f"first invoice paid {first.amount_paid} with lines {amounts}, expected 2000 + 9900")
    run.advance(clock, months_after(T0, 1) + RENEWAL_SLACK)
    paid = _paid(run.invoices(sub.id))
    need(paid == [11900, 2000], f"paid {paid}, expected the fee only on the first invoice")
    return passed("onboarding fee once, then $20.00 a month", subscription=sub.id)


def upgrade(run: Run) -> Outcome:
    clock, sub, account = run.start("upgrade")
    moment = T0 + 15 * DAY
    run.advance(clock, moment)
    status, body = run.post(f"/accounts/{account}/upgrade")
    need(status == 200, f"POST /accounts/{account}/upgrade answered {status}, expected 200: {_short(body)}")
    sub, invoices = run.subscription(sub.id), run.invoices(sub.id)
    item = _items(sub)[0]
    need(item.price.id == run.price("gym_pro_monthly").id, f"after the upgrade the item is {item.price.id}")
    share = (months_after(T0, 1) - moment) / (months_after(T0, 1) - T0)
    expected = round(5000 * share) - round(2000 * share)
    last = invoices[-1]
    need(len(invoices) == 2 and last.billing_reason == "subscription_update" and last.status == "paid"
         and abs(last.amount_paid - expected) <= CENT_TOLERANCE,
         f"invoices {[(i.billing_reason, i.status, i.amount_paid) for i in invoices]}; expected an immediate paid "
         f"subscription_update invoice of about {expected}")
    return passed(f"upgraded mid-cycle, {last.amount_paid} cents invoiced at once", subscription=sub.id)


def fixed_term(run: Run) -> Outcome:
    clock, sub, _ = run.start("fixed_term")
    for month in (1, 2):
        run.advance(clock, months_after(T0, month) + RENEWAL_SLACK)
        need(run.subscription(sub.id).status == "active", f"ended before month {month + 1}")
    run.advance(clock, months_after(T0, 3) + RENEWAL_SLACK)
    sub = run.subscription(sub.id)
    paid = _paid(run.invoices(sub.id))
    need(sub.status == "canceled" and paid == [2000, 2000, 2000],
         f"after three months the subscription is {sub.status} with paid invoices {paid}; expected canceled after "
         "exactly three paid months")
    return passed("three paid months, then canceled", subscription=sub.id)


MODELS: list[tuple[str, str, Callable[[Run], Outcome]]] = [
    ("trial_14", "14-day trial, then Starter monthly", trial_14),
    ("anchor_first", "Billed on the 1st; the first partial month prorated", anchor_first),
    ("coupon_3_months", "Pro with 25% off for exactly three months", coupon_3_months),
    ("annual", "Pro billed yearly", annual),
    ("usage", "Metered API calls billed in arrears", usage),
    ("seats", "Five Pro seats", seats),
    ("setup_fee", "Onboarding fee on the first invoice only", setup_fee),
    ("upgrade", "Mid-cycle upgrade invoiced at once", upgrade),
    ("fixed_term", "Three months, then canceled by itself", fixed_term),
]
NAMES = [name for name, _, _ in MODELS]


def _judged(check: Callable[[Run], Outcome]) -> Callable[[Run], Outcome]:
    """``check``, with Stripe refusing a step on the model's objects (what the agent set up) as its failure."""
    def scenario(run: Run) -> Outcome:
        import stripe

        try:
            return check(run)
        except (stripe.InvalidRequestError, stripe.CardError) as exc:  # a 4xx about what the agent set up
            raise Miss(f"Stripe refused a step of this model: {exc.user_message or exc}") from None

    return scenario


def _all_models(run: Run) -> dict[str, Outcome]:
    """Every model at once: each has its own clock, customer and account, so they cannot disturb one another, and
    most of a model's time is waiting on the app and on Stripe."""
    with ThreadPoolExecutor(max_workers=len(MODELS)) as pool:
        futures = [pool.submit(run_scenarios, run, [((name,), _judged(check))])
                   for name, _, check in MODELS]
        results: dict[str, Outcome] = {}
        for future in futures:
            results.update(future.result())
    return results


def _results(ctx: Any) -> dict[str, Outcome]:
    return once_per_context(ctx, "subscription-gym", lambda: with_run(ctx, Run, NAMES, _all_models))


GRADER = Grader(
    criteria=tuple(scenario_criterion(name, 1.0, description, _results) for name, description, _ in MODELS),
    description="Signs a test-clock customer up for each model through the app (POST /signup), finds the "
                "subscription in the app's database, advances the clock through the months that matter and checks "
                "statuses, invoice totals, billing reasons and lines.",
)
