"""Grader for subscription-gym: each business model runs on its own test clock and is judged by its invoices.

Public means only (the same run works against Stripe test mode): for every model the grader creates a test clock
frozen at ``T0``, a customer on it with a default card, runs ``python3 subscribe.py create <model> <customer>``
where the episode's code runs, then advances the clock (waiting for ``status=ready``, as Stripe's clocks advance
asynchronously) through the months the model is about and reads the subscription and its invoices through the
API: statuses, totals, billing reasons, line quantities. Each model is one criterion of equal weight, so the score
is the fraction of models configured right. The clocks are deleted afterwards.
"""

from __future__ import annotations

import calendar
import json
import shlex
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from stripebench_tui.grading import Grader, Outcome, passed
from stripebench_tui.grading.once import once_per_context
from stripebench_tui.grading.scenarios import Miss, need, run_scenarios, scenario_criterion, with_run

T0 = int(datetime(2026, 1, 10, 12, tzinfo=timezone.utc).timestamp())
DAY = 86400
RENEWAL_SLACK = 7200  # Stripe finalises and charges a renewal about an hour after the period ends
CENT_TOLERANCE = 2  # proration rounding may differ by a cent
# Only a stuck command or clock takes this long, also on a loaded machine.
COMMAND_TIMEOUT = 120.0
CLOCK_TIMEOUT = 300.0


def months_after(moment: int, months: int) -> int:
    """``moment`` plus whole calendar months (the day clamped to the month's length, like Stripe's periods)."""
    when = datetime.fromtimestamp(moment, timezone.utc)
    year, month = divmod(when.month - 1 + months, 12)
    year, month = when.year + year, month + 1
    return int(when.replace(year=year, month=month, day=min(when.day, calendar.monthrange(year, month)[1]))
               .timestamp())


class Run:
    """One grading run: the Stripe client, the catalogue, and how to run the agent's command."""

    def __init__(self, ctx: Any) -> None:
        import stripe

        self.ctx = ctx
        # Our own client: a model's thread sits idle while the agent's command runs, longer than a server keeps an
        # idle connection open, and the next call must not fail on that closed connection. Retried POSTs carry an
        # idempotency key (the SDK adds one), so a retry never makes a second object.
        base = {"api": ctx.stripe_api_base} if ctx.stripe_api_base else None
        self.stripe = stripe.StripeClient(ctx.stripe_api_key, base_addresses=base, max_network_retries=2).v1
        self.clocks: list[str] = []  # appended to by the models' threads (list.append is atomic)
        self.prices = {p.lookup_key: p for p in self.stripe.prices.list(params={
            "lookup_keys": ["gym_starter_monthly", "gym_pro_monthly", "gym_pro_annual", "gym_api_calls",
                            "gym_setup_fee"], "active": True}).data}
        self.logs = Path(ctx.episode_dir) / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)

    def close(self) -> None:
        for clock in self.clocks:  # deleting a clock deletes its customers and subscriptions
            try:
                self.stripe.test_helpers.test_clocks.delete(clock)
            except Exception:  # noqa: BLE001 - cleanup only
                pass

    def command(self, *args: str) -> dict[str, Any]:
        """``python3 subscribe.py ARGS`` in the workspace; its last line as JSON (Miss when it fails)."""
        log_path = self.logs / f"grader-subscribe-{'-'.join(args[:2])}.log"
        with open(log_path, "ab") as log:
            start = log.tell()
            env = {"STRIPE_SECRET_KEY": self.ctx.stripe_api_key, "PYTHONUNBUFFERED": "1"}
            unset: tuple[str, ...] = ()
            if self.ctx.stripe_api_base:
                env["STRIPE_API_BASE"] = self.ctx.stripe_api_base
            else:
                unset = ("STRIPE_API_BASE",)
            proc = self.ctx.processes.start_process("python3 subscribe.py " + " ".join(shlex.quote(a) for a in args),
                                                    cwd=Path(self.ctx.workspace), env=env, unset=unset, log=log)
            code = proc.wait(timeout=COMMAND_TIMEOUT)
        output = log_path.read_bytes()[start:].decode(errors="replace").strip()
        need(code == 0, f"subscribe.py {' '.join(args)} exited with {code}: {output[-300:]}")
        try:
            answer = json.loads(output.splitlines()[-1])
        except (ValueError, IndexError):
            raise Miss(f"subscribe.py {' '.join(args)} did not end with a JSON line: {output[-300:]}") from None
        need(isinstance(answer, dict) and str(answer.get("subscription") or "").startswith("sub_"),
             f"subscribe.py {' '.join(args)} printed no subscription id: {output[-300:]}")
        return answer

    def start(self, model: str) -> tuple[str, Any]:
        """A clock and customer for ``model``, and the subscription the agent's command made for it."""
        clock = self.stripe.test_helpers.test_clocks.create(params={"frozen_time": T0, "name": f"gym {model}"})
        self.clocks.append(clock.id)
        customer = self.stripe.customers.create(params={
            "test_clock": clock.id, "email": f"{model}@gym.example", "payment_method": "pm_card_visa",
            "invoice_settings": {"default_payment_method": "pm_card_visa"}})
        sub_id = self.command("create", model, customer.id)["subscription"]
        sub = self.subscription(sub_id)
        need(sub.customer == customer.id, f"{sub_id} belongs to {sub.customer}, not the customer given")
        return clock.id, sub

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
    clock, sub = run.start("trial_14")
    need(sub.status == "trialing" and sub.trial_end == T0 + 14 * DAY,
         f"expected a trial until {T0 + 14 * DAY}, got status {sub.status} trial_end {sub.trial_end}")
    run.advance(clock, T0 + 14 * DAY + RENEWAL_SLACK)
    sub, invoices = run.subscription(sub.id), run.invoices(sub.id)
    need(sub.status == "active", f"after the trial the subscription is {sub.status}")
    need(_paid(invoices) == [0, 2000], f"paid invoices {_paid(invoices)}, expected [0, 2000] (trial, then Starter)")
    return passed("trialing 14 days, then $20.00 charged", subscription=sub.id)


def anchor_first(run: Run) -> Outcome:
    clock, sub = run.start("anchor_first")
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
    clock, sub = run.start("coupon_3_months")
    for month in (1, 2, 3):
        run.advance(clock, months_after(T0, month) + RENEWAL_SLACK)
    paid = _paid(run.invoices(sub.id))
    need(paid == [3750, 3750, 3750, 5000], f"paid {paid}, expected three months at $37.50 then $50.00")
    return passed("25% off for three months, then full price", subscription=sub.id)


def annual(run: Run) -> Outcome:
    _, sub = run.start("annual")
    item = _items(sub)[0]
    need(item.price.id == run.price("gym_pro_annual").id, f"the item's price is {item.price.id}, not the annual one")
    need(item.current_period_end == months_after(T0, 12), f"the period ends {item.current_period_end}, not a year on")
    need(_paid(run.invoices(sub.id)) == [50000], f"paid {_paid(run.invoices(sub.id))}, expected [50000]")
    return passed("$500.00 for a year", subscription=sub.id)


def usage(run: Run) -> Outcome:
    clock, sub = run.start("usage")
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
    _, sub = run.start("seats")
    item = _items(sub)[0]
    need((item.price.id, item.quantity) == (run.price("gym_pro_monthly").id, 5),
         f"the item is {item.price.id} × {item.quantity}, expected Pro × 5")
    need(_paid(run.invoices(sub.id)) == [25000], f"paid {_paid(run.invoices(sub.id))}, expected [25000]")
    return passed("5 Pro seats, $250.00", subscription=sub.id)


def setup_fee(run: Run) -> Outcome:
    clock, sub = run.start("setup_fee")
    first = run.invoices(sub.id)[0]
    amounts = sorted(line.amount for line in first.lines.data)
    need(first.amount_paid == 11900 and amounts == [2000, 9900],
         f"first invoice paid {first.amount_paid} with lines {amounts}, expected 2000 + 9900")
    run.advance(clock, months_after(T0, 1) + RENEWAL_SLACK)
    paid = _paid(run.invoices(sub.id))
    need(paid == [11900, 2000], f"paid {paid}, expected the fee only on the first invoice")
    return passed("onboarding fee once, then $20.00 a month", subscription=sub.id)


def upgrade(run: Run) -> Outcome:
    clock, sub = run.start("upgrade")
    moment = T0 + 15 * DAY
    run.advance(clock, moment)
    run.command("upgrade", sub.id)
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
    clock, sub = run.start("fixed_term")
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
    """Every model at once: each has its own clock and customer, so they cannot disturb one another, and most of
    a model's time is the agent's command starting up."""
    with ThreadPoolExecutor(max_workers=len(MODELS)) as pool:
        futures = [pool.submit(run_scenarios, run, [((name,), _judged(check))], "subscribe.py")
                   for name, _, check in MODELS]
        results: dict[str, Outcome] = {}
        for future in futures:
            results.update(future.result())
    return results


def _results(ctx: Any) -> dict[str, Outcome]:
    return once_per_context(ctx, "subscription-gym", lambda: with_run(ctx, Run, NAMES, _all_models))


GRADER = Grader(
    criteria=tuple(scenario_criterion(name, 1.0, description, _results) for name, description, _ in MODELS),
    description="Runs subscribe.py for each model on its own test clock and customer, advances the clock through "
                "the months that matter and checks statuses, invoice totals, billing reasons and lines.",
)
