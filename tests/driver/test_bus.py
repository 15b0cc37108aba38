"""The event bus: stamping, ordered delivery, publishing from subscribers, backpressure."""

from __future__ import annotations

import asyncio

from stripebench_tui.core.bus import EventBus
from stripebench_tui.core.events import GraderVerdict, ModelMessage, ToolResult

from .scripted import Collector, FakeClock


async def test_publish_stamps_seq_time_and_turn_from_the_bus():
    clock = FakeClock(50.0)
    bus = EventBus(clock=clock)
    clock.advance(1.5)
    a = await bus.publish(ModelMessage(text="a"))
    bus.turn = 3
    clock.advance(2.0)
    b = bus.publish_nowait(ModelMessage(text="b"))
    c = await bus.publish(ModelMessage(text="c"), turn=1)
    assert [(e.seq, e.t, e.turn) for e in (a, b, c)] == [(0, 1.5, 0), (1, 3.5, 3), (2, 3.5, 1)]
    await bus.close()


async def test_time_never_runs_backwards():
    clock = FakeClock(10.0)
    bus = EventBus(clock=clock)
    clock.advance(5)
    first = bus.publish_nowait(ModelMessage())
    clock.advance(-3)  # a clock stepped back must not make the log go back in time
    second = bus.publish_nowait(ModelMessage())
    assert second.t == first.t == 5
    await bus.close()


async def test_every_subscriber_gets_every_event_in_order_including_ones_published_by_subscribers():
    bus = EventBus(clock=FakeClock())
    first, last = Collector(), Collector()
    bus.subscribe(first, name="first")

    async def grader(event):
        # A grader answers each tool result with a verdict, published from inside delivery.
        if isinstance(event, ToolResult):
            await asyncio.sleep(0)
            await bus.publish(GraderVerdict(criterion=f"after-{event.call_id}", status="pass"))

    bus.subscribe(grader, name="grader", maxsize=1)  # a full own queue must not block its own publishes
    bus.subscribe(last, name="last")
    for i in range(20):
        await bus.publish(ToolResult(call_id=f"c{i}"))
    assert await bus.drain(timeout=5)
    assert [e.seq for e in first.events] == list(range(40))
    assert [e.seq for e in last.events] == [e.seq for e in first.events]
    verdicts = [e for e in first.events if isinstance(e, GraderVerdict)]
    results = {e.call_id: e.seq for e in first.events if isinstance(e, ToolResult)}
    assert len(verdicts) == 20
    for v in verdicts:
        assert v.seq > results[v.criterion.removeprefix("after-")]
    await bus.close()


async def test_a_stuck_subscriber_is_detached_instead_of_blocking_publish():
    bus = EventBus(clock=FakeClock())
    forever = asyncio.Event()

    async def stuck(event):
        await forever.wait()

    seen = Collector()
    stuck_sub = bus.subscribe(stuck, name="stuck", maxsize=2, block_timeout=0.05)
    bus.subscribe(seen)
    for i in range(5):
        await asyncio.wait_for(bus.publish(ModelMessage(text=str(i))), 1.0)
    assert stuck_sub.detached.startswith("stuck fell")
    assert stuck_sub not in bus.subscriptions
    assert bus.failure == ""  # not critical: the episode goes on
    assert await bus.drain(timeout=1)
    assert len(seen.events) == 5
    await bus.close()


async def test_a_critical_subscriber_that_raises_sets_the_bus_failure():
    bus = EventBus(clock=FakeClock())

    def broken(event):
        raise OSError("disk full")

    sub = bus.subscribe(broken, name="recorder", critical=True)
    await bus.publish(ModelMessage())
    await bus.drain(timeout=1)
    assert bus.failure == "recorder failed: OSError: disk full"
    assert sub.detached
    await bus.close()


async def test_a_non_critical_subscriber_that_raises_keeps_receiving():
    bus = EventBus(clock=FakeClock())
    got = []

    def flaky(event):
        got.append(event.seq)
        if event.seq == 0:
            raise ValueError("bug")

    sub = bus.subscribe(flaky)
    await bus.publish(ModelMessage())
    await bus.publish(ModelMessage())
    await bus.drain(timeout=1)
    assert got == [0, 1]
    assert [type(e) for e in sub.errors] == [ValueError]
    assert bus.failure == ""
    await bus.close()


async def test_drain_waits_for_slow_async_subscribers():
    bus = EventBus(clock=FakeClock())
    handled = []

    async def slow(event):
        for _ in range(5):
            await asyncio.sleep(0)
        handled.append(event.seq)

    bus.subscribe(slow)
    for _ in range(3):
        bus.publish_nowait(ModelMessage())
    assert handled == []
    assert await bus.drain(timeout=1)
    assert handled == [0, 1, 2]
    await bus.close()
