"""Test-clock advance cost: 100 monthly subscriptions on one clock moved through 12 renewals.

A clock advances at most two intervals of its shortest subscription at a time (Stripe's rule), so the year is 12
``advance`` calls of one month (plus the hour each renewal's draft waits before it is finalised and charged). Each
renewal makes an invoice, a PaymentIntent and a charge, and about ten events. The same number of events is then made
directly (one ``POST /v1/customers`` each makes one object and one event) on the same server. Prints wall time and
events/s of both, and on the last line the ratio advance/direct (events per second, higher is better).

    python benchmarks/test_clock_advance.py --subscriptions 100 --months 12
"""

from __future__ import annotations

import argparse
import calendar
import time
from datetime import datetime, timezone

import httpx

from stripebench_emulator import running_emulator

KEY = "sk_test_bench_clock"
START = int(datetime(2026, 1, 1, tzinfo=timezone.utc).timestamp())


def month_after(moment: int) -> int:
    when = datetime.fromtimestamp(moment, timezone.utc)
    year, month = (when.year + 1, 1) if when.month == 12 else (when.year, when.month + 1)
    day = min(when.day, calendar.monthrange(year, month)[1])
    return int(when.replace(year=year, month=month, day=day).timestamp())


def event_count(api: httpx.Client) -> int:
    """How many events the account has (walks the list; fine for benchmark sizes)."""
    total, cursor = 0, None
    while True:
        params = {"limit": 100, **({"starting_after": cursor} if cursor else {})}
        page = api.get("/v1/events", params=params).json()
        total += len(page["data"])
        if not page["has_more"]:
            return total
        cursor = page["data"][-1]["id"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subscriptions", type=int, default=100, help="subscriptions on the clock (default 100)")
    parser.add_argument("--months", type=int, default=12, help="monthly renewals to advance through (default 12)")
    args = parser.parse_args()
    with running_emulator() as server, httpx.Client(base_url=server.url, timeout=600,
                                                    headers={"Authorization": f"Bearer {KEY}"}) as api:
        clock = api.post("/v1/test_helpers/test_clocks", data={"frozen_time": START}).json()
        price = api.post("/v1/prices", data={"currency": "usd", "unit_amount": 1200, "recurring[interval]": "month",
                                             "product_data[name]": "Monthly"}).json()
        for _ in range(args.subscriptions):
            customer = api.post("/v1/customers", data={
                "test_clock": clock["id"], "payment_method": "pm_card_visa",
                "invoice_settings[default_payment_method]": "pm_card_visa"}).json()
            api.post("/v1/subscriptions", data={"customer": customer["id"], "items[0][price]": price["id"]})
        before = event_count(api)
        target, started = START, time.perf_counter()
        for _ in range(args.months):
            target = month_after(target)
            reply = api.post(f"/v1/test_helpers/test_clocks/{clock['id']}/advance",
                             data={"frozen_time": target + 7200})
            reply.raise_for_status()
        advance_wall = time.perf_counter() - started
        made = event_count(api) - before
        paid = api.get("/v1/invoices", params={"status": "paid", "limit": 100}).json()["data"]
        assert paid and paid[0]["billing_reason"] == "subscription_cycle", paid[:1]

        started = time.perf_counter()
        for _ in range(made):
            api.post("/v1/customers", data={"email": "direct@example.com"}).raise_for_status()
        direct_wall = time.perf_counter() - started
    advance_rate, direct_rate = made / advance_wall, made / direct_wall
    print(f"advance: {args.subscriptions} subscriptions × {args.months} renewals, {made} events "
          f"in {advance_wall:.2f} s ({advance_rate:.0f} events/s, {args.months} requests)")
    print(f"direct:  {made} customers created one request each in {direct_wall:.2f} s ({direct_rate:.0f} events/s)")
    print(f"ratio advance/direct (events/s): {advance_rate / direct_rate:.2f}")


if __name__ == "__main__":
    main()
