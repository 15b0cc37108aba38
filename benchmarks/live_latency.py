"""Live grading latency: a Stripe object created through the SDK → its grader verdict on the bus.

    python benchmarks/live_latency.py [--objects 50]

The whole live path as an episode wires it: the in-process emulator, the Stripe
watcher polling /v1/events (nudged by the emulator's event listener), the bus, and
``LiveGrading`` re-checking a criterion that reads the customers back through the
SDK. Prints the median and worst of two spans — created → verdict, and object seen
on the bus → verdict — and, last, the median's ratio to the 100 ms target.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import stripe

from stripebench_tui.core.bus import EventBus
from stripebench_tui.core.events import Event, GraderVerdict, StripeObject
from stripebench_emulator import running_emulator
from stripebench_tui.envs.manifest import Environment, Manifest
from stripebench_tui.grading import Criterion, Grader, GradingContext, LiveGrading, passed
from stripebench_tui.stripe_account.watcher import StripeWatcher

TARGET = 0.100
KEY = "sk_test_benchmark"


def newest_customer(ctx, view):
    """Evidence changes with every customer, so each one yields a verdict."""
    newest = ctx.stripe.v1.customers.list(params={"limit": 1}).data
    return passed(newest=newest[0].id if newest else None)


async def measure(objects: int) -> tuple[list[float], list[float]]:
    with running_emulator() as emu, tempfile.TemporaryDirectory() as tmp:
        bus = EventBus()
        seen_at: dict[str, float] = {}  # object id → when the bus delivered it
        verdict_at: dict[str, float] = {}  # object id → when its verdict arrived

        def clock(event: Event) -> None:
            if isinstance(event, StripeObject):
                seen_at.setdefault(event.object_id, time.perf_counter())
            elif isinstance(event, GraderVerdict) and event.evidence.get("newest"):
                verdict_at.setdefault(event.evidence["newest"], time.perf_counter())

        bus.subscribe(clock, name="clock")
        client = stripe.StripeClient(KEY, base_addresses={"api": emu.url}, http_client=stripe.HTTPXClient())
        watcher = StripeWatcher(client, bus)
        await watcher.start()
        emu.emulator.on_event(lambda _event: watcher.nudge())
        env = Environment(Path(tmp), Manifest(id="bench", title="Benchmark", category="backend"))
        ctx = GradingContext(env=env, episode_dir=Path(tmp), workspace=Path(tmp), stripe_api_base=emu.url, stripe_api_key=KEY)
        grader = Grader((Criterion("newest customer", 1, "Names the newest customer.", newest_customer, on=("customer",)),))
        live = LiveGrading(grader, ctx).attach(bus)
        sync_client = stripe.StripeClient(KEY, base_addresses={"api": emu.url}, max_network_retries=0)
        total, bus_to_verdict = [], []
        for i in range(objects):
            started = time.perf_counter()
            customer = await asyncio.to_thread(sync_client.v1.customers.create, params={"email": f"c{i}@example.com"})
            while customer.id not in verdict_at:
                await asyncio.sleep(0.0005)
            total.append(verdict_at[customer.id] - started)
            bus_to_verdict.append(verdict_at[customer.id] - seen_at[customer.id])
        await live.close()
        await watcher.stop_polling()
        ctx.close()
        await bus.close()
        return total, bus_to_verdict


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=50)
    args = parser.parse_args()
    total, bus_to_verdict = asyncio.run(measure(args.objects))
    for name, values in (("created → verdict", total), ("seen on the bus → verdict", bus_to_verdict)):
        print(f"{name:28} median {statistics.median(values) * 1000:6.1f} ms   max {max(values) * 1000:6.1f} ms")
    print(f"median created → verdict / 100 ms target: {statistics.median(total) / TARGET:.2f}×")


if __name__ == "__main__":
    main()
