"""Live grading on a bus: verdicts only on change, triggers, errors, turn ends and the final score."""

from __future__ import annotations

import asyncio

from stripebench_tui.core.bus import EventBus
from stripebench_tui.core.events import ERROR, PASS, PENDING, StripeObject
from stripebench_tui.grading import Criterion, Grader, LiveGrading, failed, passed
from tests.driver.scripted import ScriptedAgent, ScriptedTools, call, make_driver, turn

from .helpers import Verdicts, checkout_grader, session


async def settle(bus, live):
    """Every event delivered, every check run, every verdict delivered."""
    await bus.drain()
    await live.idle()
    await bus.drain()


async def test_verdicts_are_published_only_when_status_or_evidence_changes(ctx):
    bus = EventBus()
    seen = Verdicts(bus)
    live = LiveGrading(checkout_grader(), ctx).attach(bus)
    await bus.drain()
    assert [(v.criterion, v.status, v.trigger) for v in seen.verdicts] == [("mode", PENDING, "start"), ("paid", PENDING, "start")]
    assert seen.verdicts[1].weight == 2.0 and seen.verdicts[1].description == "The session is paid."

    bus.turn = 3
    await bus.publish(session("cs_a", mode="payment", payment_status="unpaid"))
    await settle(bus, live)
    mode = seen.latest("mode")
    assert (mode.status, mode.trigger, mode.request_id, mode.turn) == (PASS, "evt_cs_a", "req_cs_a", 3)
    assert mode.evidence == {"candidate": "cs_a", "expected": "payment", "actual": "payment", "session": "cs_a",
                             "summary": "mode is 'payment'"}
    assert seen.latest("paid").status == PENDING and seen.latest("paid").evidence["candidate"] == "cs_a"
    count = len(seen.verdicts)

    await bus.publish(session("cs_a", mode="payment", payment_status="unpaid"))  # same state again: nothing new
    await settle(bus, live)
    assert len(seen.verdicts) == count

    await bus.publish(session("cs_a", mode="payment", payment_status="paid"))
    await settle(bus, live)
    assert [(v.criterion, v.status) for v in seen.verdicts[count:]] == [("paid", PASS)]
    await live.close()
    await bus.close()


async def test_objects_of_other_types_do_not_trigger_checks(ctx):
    calls = []

    def count(ctx, view):
        calls.append(view.trigger)
        return passed()

    bus = EventBus()
    live = LiveGrading(Grader((Criterion("c", 1, "C.", count, on=("customer",)),)), ctx).attach(bus)
    await bus.publish(StripeObject(object_id="prod_1", object_type="product", event_id="evt_1"))
    await bus.publish(StripeObject(object_id="cus_1", object_type="customer", event_id="evt_2"))
    await settle(bus, live)
    assert calls == ["evt_2"]
    await live.close()
    await bus.close()


async def test_a_raising_criterion_shows_as_error_live_and_scores_nothing(ctx):
    def broken(ctx, view):
        raise RuntimeError("no such table: orders")

    bus = EventBus()
    seen = Verdicts(bus)
    grader = Grader((Criterion("broken", 1, "Broken.", broken, on=("*",)), Criterion("fine", 1, "Fine.", lambda c, v: passed())))
    live = LiveGrading(grader, ctx).attach(bus)
    await bus.publish(StripeObject(object_id="cus_1", object_type="customer", event_id="evt_1"))
    verdict = await seen.wait_for(lambda v: v.criterion == "broken" and v.status != PENDING)
    assert verdict.status == ERROR and verdict.evidence["error"] == "RuntimeError: no such table: orders"
    final = await live.final_hook()
    assert (final.score, final.passed) == (0.5, False)
    await bus.drain()
    assert seen.latest("broken").status == ERROR and seen.latest("broken").final
    await bus.close()


async def test_a_burst_of_objects_is_checked_in_few_batches(ctx):
    seen_triggers = []

    def slow(ctx, view):
        seen_triggers.append(view.trigger)
        import time

        time.sleep(0.02)
        return passed(n=len(view.of_type("customer")))

    bus = EventBus()
    live = LiveGrading(Grader((Criterion("n", 1, "N.", slow, on=("customer",)),)), ctx).attach(bus)
    for i in range(20):
        await bus.publish(StripeObject(object_id=f"cus_{i}", object_type="customer", event_id=f"evt_{i}"))
    await settle(bus, live)
    assert len(seen_triggers) < 20 and seen_triggers[-1] == "evt_19"
    await live.close()
    await bus.close()


async def test_turn_ends_and_the_final_hook_through_the_driver(ctx):
    world = {"orders": 0}

    def orders(ctx, view):
        n = world["orders"]
        return passed(orders=n) if n >= 2 else failed(f"{n} orders, expected 2", expected=2, actual=n)

    def place(arguments):
        world["orders"] += 1
        return "placed"

    agent = ScriptedAgent([turn(call("c1", tool="order")), turn(call("c2", tool="order")), turn(done=True)])
    driver, seen = make_driver(agent, ScriptedTools({"order": place}))
    live = LiveGrading(Grader((Criterion("two orders", 1, "Two orders were placed.", orders),)), ctx).attach(driver.bus)
    driver.turn_end_hooks.append(live.turn_end_hook)
    driver.final_hooks.append(live.final_hook)
    end = await driver.run()
    verdicts = [e for e in seen.events if e.type == "grader_verdict"]
    assert [(v.turn, v.status, v.trigger, v.final) for v in verdicts] == [
        (0, PENDING, "start", False),
        (1, "fail", "turn_end", False),
        (2, PASS, "turn_end", False),
        (3, PASS, "final", True),  # the final verdict is always published, changed or not
    ]
    assert verdicts[1].evidence == {"expected": 2, "actual": 1, "summary": "1 orders, expected 2"}
    assert (end.score, end.passed) == (1.0, True)
    assert all(v.seq < end.seq for v in verdicts)


async def test_a_submission_written_during_the_episode_becomes_the_candidate_at_turn_end(ctx):
    bus = EventBus()
    seen = Verdicts(bus)
    live = LiveGrading(checkout_grader(), ctx).attach(bus)
    await bus.publish(session("cs_good", mode="payment", payment_status="paid"))
    await bus.publish(session("cs_other", mode="setup", payment_status="unpaid"))
    await seen.wait_for(lambda v: v.criterion == "paid" and v.status == PASS)
    assert seen.latest("paid").evidence["candidate"] == "cs_good"

    ctx.submission_path.write_text("cs_other")
    bus.turn = 4

    class Driverish:
        turn = 4

    await live.turn_end_hook(Driverish())
    await bus.drain()
    assert seen.latest("paid").evidence["candidate"] == "cs_other"
    assert (seen.latest("mode").status, seen.latest("mode").trigger, seen.latest("mode").turn) == ("fail", "turn_end", 4)
    final = await live.final_hook()
    assert final.score == 0.0 and final.passed is False
    await bus.close()


async def test_no_live_verdict_follows_the_final_ones(ctx):
    import threading

    release = threading.Event()

    def slow_at_the_end(ctx, view):
        if view.final:
            release.wait(5)
        return passed(customers=len(view.of_type("customer")))

    bus = EventBus()
    seen = Verdicts(bus)
    live = LiveGrading(Grader((Criterion("n", 1, "N.", slow_at_the_end, on=("customer",)),)), ctx).attach(bus)
    final = asyncio.ensure_future(live.final_hook())
    await asyncio.sleep(0.05)  # the final check is running; an object arrives meanwhile
    await bus.publish(StripeObject(object_id="cus_late", object_type="customer", event_id="evt_late"))
    await bus.drain()
    release.set()
    assert (await final).score == 1.0
    await asyncio.sleep(0.05)
    await bus.drain()
    assert seen.verdicts[-1].final and not any(v.trigger == "evt_late" for v in seen.verdicts)
    await bus.close()


async def test_a_turn_end_covers_objects_published_just_before_it(ctx):
    class Driverish:
        turn = 2

    bus = EventBus()
    live = LiveGrading(checkout_grader(), ctx).attach(bus)
    bus.publish_nowait(session("cs_1", mode="payment", payment_status="paid"))  # as the watcher's turn-end sync does
    await live.turn_end_hook(Driverish())
    assert live.published["paid"].status == PASS and live.published["paid"].evidence["candidate"] == "cs_1"
    await live.close()
    await bus.close()
