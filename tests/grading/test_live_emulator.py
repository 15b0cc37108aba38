"""Live grading against the real emulator through the official SDK: a toy grader, and object→verdict latency."""

from __future__ import annotations

import asyncio
import statistics

from stripebench_tui.core.bus import EventBus
from stripebench_tui.core.events import PASS, PENDING, StripeObject
from stripebench_tui.grading import Criterion, Grader, GradingContext, LiveGrading, failed, passed, pending

from .helpers import Verdicts

EMAIL = "jenny@example.com"


def customer_with_email(ctx, view):
    """Passes once a customer with EMAIL exists, read through the SDK (not from the bus)."""
    found = ctx.stripe.v1.customers.list(params={"email": EMAIL, "limit": 10}).data
    if found:
        return passed(f"customer {found[0].id} has {EMAIL}", customer=found[0].id, expected=EMAIL, actual=found[0].email)
    return pending(f"no customer with {EMAIL} yet", expected=EMAIL) if not view.final else failed(f"no customer with {EMAIL}")


def customers_seen(ctx, view):
    """Evidence changes with every new customer, so each one yields a verdict (for the latency sample)."""
    ids = sorted(view.of_type("customer"))
    total = len(ctx.stripe.v1.customers.list(params={"limit": 100}).data)
    return passed(customers=total, newest=ids[-1] if ids else None)


def publish_new_events(client, bus: EventBus, seen: set[str]) -> list[StripeObject]:
    """What the runtime's watcher does: turn new /v1/events into stripe_object events."""
    out = []
    for evt in reversed(client.v1.events.list(params={"limit": 20}).data):
        if evt.id in seen:
            continue
        seen.add(evt.id)
        obj = evt.data.object
        change = "deleted" if evt.type.endswith(".deleted") else "created" if evt.type.endswith(".created") else "updated"
        request = getattr(evt, "request", None)
        out.append(bus.publish_nowait(StripeObject(object_id=obj["id"], object_type=obj["object"], change=change,
                                                   data=obj.to_dict(), event_id=evt.id, event_type=evt.type,
                                                   request_id=(request.id if request else "") or "")))
    return out


async def test_a_customer_created_through_the_sdk_turns_the_verdict_to_pass(env, tmp_path, emulator, stripe_client):
    ctx = GradingContext(env=env, episode_dir=tmp_path, workspace=tmp_path, stripe_api_base=emulator.url,
                         stripe_api_key="sk_test_emulator_123")
    grader = Grader((Criterion("jenny", 1, f"A customer with the email {EMAIL} exists.", customer_with_email, on=("customer",)),))
    bus = EventBus()
    verdicts = Verdicts(bus)
    live = LiveGrading(grader, ctx).attach(bus)
    seen: set[str] = set()

    await asyncio.to_thread(stripe_client.v1.customers.create, params={"email": "someone@example.com"})
    publish_new_events(stripe_client, bus, seen)
    first = await verdicts.wait_for(lambda v: v.trigger.startswith("evt_"))
    assert first.status == PENDING and first.evidence["expected"] == EMAIL

    created = await asyncio.to_thread(stripe_client.v1.customers.create, params={"email": EMAIL})
    [obj] = publish_new_events(stripe_client, bus, seen)
    verdict = await verdicts.wait_for(lambda v: v.status == PASS)
    assert verdict.evidence["customer"] == created.id and verdict.trigger == obj.event_id
    assert verdict.request_id == obj.request_id and obj.request_id.startswith("req_")
    final = await live.final_hook()
    assert (final.score, final.passed) == (1.0, True)
    ctx.close()
    await bus.close()


async def test_object_to_verdict_latency_on_the_emulator(env, tmp_path, emulator, stripe_client):
    ctx = GradingContext(env=env, episode_dir=tmp_path, workspace=tmp_path, stripe_api_base=emulator.url,
                         stripe_api_key="sk_test_emulator_123")
    grader = Grader((Criterion("customers", 1, "Counts customers.", customers_seen, on=("customer",)),))
    bus = EventBus()
    verdicts = Verdicts(bus)
    live = LiveGrading(grader, ctx).attach(bus)
    seen: set[str] = set()
    latencies = []
    for i in range(15):
        await asyncio.to_thread(stripe_client.v1.customers.create, params={"email": f"c{i}@example.com"})
        [obj] = publish_new_events(stripe_client, bus, seen)
        verdict = await verdicts.wait_for(lambda v, o=obj: v.trigger == o.event_id)
        latencies.append(verdicts.arrived[verdict.seq] - verdicts.arrived[obj.seq])
        assert verdict.evidence["customers"] == i + 1
    median = statistics.median(latencies)
    print(f"\nobject→verdict latency on the emulator: median {median * 1000:.1f} ms, max {max(latencies) * 1000:.1f} ms")
    assert median <= 0.100
    await live.close()
    ctx.close()
    await bus.close()
