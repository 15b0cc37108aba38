"""Limits end the episode with their reason: turns, wall time (not counting pauses), tokens, cost."""

from __future__ import annotations

import asyncio
import time

from stripebench_tui.core import operator as op
from stripebench_tui.core.driver import Limits

from .scripted import FakeClock, ScriptedAgent, call, make_driver, turn, wait_status


async def test_max_turns():
    agent = ScriptedAgent([turn(call("c"))], repeat_last=True)
    driver, seen = make_driver(agent, limits=Limits(max_turns=3))
    end = await driver.run()
    assert end.reason == "max_turns" and len(agent.seen) == 3
    assert [e.type for e in seen.events].count("tool_result") == 3


async def test_the_last_allowed_turn_may_still_finish_the_episode():
    agent = ScriptedAgent([turn(call("c")), turn(done=True)])
    driver, _ = make_driver(agent, limits=Limits(max_turns=2))
    assert (await driver.run()).reason == "agent_done"


async def test_wall_time_between_turns_by_the_injected_clock():
    clock = FakeClock()

    def slow(observations):
        clock.advance(10.0)
        return turn(call("c"))

    agent = ScriptedAgent([slow], repeat_last=True)
    driver, seen = make_driver(agent, clock=clock, limits=Limits(wall_time=25.0))
    end = await driver.run()
    assert end.reason == "wall_time" and len(agent.seen) == 3
    assert end.t == 30.0


async def test_wall_time_cancels_an_agent_that_hangs():
    async def hang(observations):
        await asyncio.Event().wait()

    agent = ScriptedAgent([turn(call("c")), hang])
    driver, _ = make_driver(agent, clock=time.monotonic, limits=Limits(wall_time=0.2))  # real time must pass
    started = time.monotonic()
    end = await asyncio.wait_for(driver.run(), 5)
    assert end.reason == "wall_time" and agent.cancelled
    assert 0.15 < time.monotonic() - started < 2.0


async def test_time_paused_does_not_count_against_wall_time():
    clock = FakeClock()
    agent = ScriptedAgent([turn(call("c")), turn(done=True)])
    driver, _ = make_driver(agent, clock=clock, limits=Limits(wall_time=5.0), start_paused=True)
    task = asyncio.create_task(driver.run())
    await wait_status(driver, op.PAUSED)
    clock.advance(60.0)  # the operator looked at the screen for a minute
    driver.resume()
    assert (await asyncio.wait_for(task, 5)).reason == "agent_done"


async def test_token_budget():
    agent = ScriptedAgent([turn(call("c"), tokens_in=80, tokens_out=20)], repeat_last=True)
    driver, _ = make_driver(agent, limits=Limits(max_tokens=250))
    end = await driver.run()
    assert (end.reason, end.error) == ("budget", "300 tokens used of 250")
    assert len(agent.seen) == 3


async def test_cost_budget():
    agent = ScriptedAgent([turn(call("c"), cost_usd=0.4)], repeat_last=True)
    driver, _ = make_driver(agent, limits=Limits(max_cost_usd=1.0))
    end = await driver.run()
    assert end.reason == "budget" and "$1.2000 spent of $1.0000" == end.error
    assert len(agent.seen) == 3


async def test_final_grading_runs_even_when_the_wall_time_is_used_up():
    clock = FakeClock()

    def slow(observations):
        clock.advance(10.0)
        return turn(call("c"))

    async def final(driver):
        await asyncio.sleep(0.01)
        from stripebench_tui.core.driver import FinalScore

        return FinalScore(score=0.0, passed=False)

    agent = ScriptedAgent([slow], repeat_last=True)
    driver, _ = make_driver(agent, clock=clock, limits=Limits(wall_time=5.0), final_hooks=[final])
    end = await driver.run()
    assert (end.reason, end.score, end.passed) == ("wall_time", 0.0, False)


async def test_time_waiting_for_approval_does_not_count_against_wall_time():
    clock = FakeClock()
    agent = ScriptedAgent([turn(call("c1")), turn(done=True)])
    driver, _ = make_driver(agent, clock=clock, limits=Limits(wall_time=5.0), approval=op.ALWAYS)
    task = asyncio.create_task(driver.run())
    await wait_status(driver, op.WAITING_FOR_APPROVAL)
    clock.advance(60.0)
    driver.approve()
    assert (await asyncio.wait_for(task, 5)).reason == "agent_done"


async def test_active_time_excludes_held_spans():
    from stripebench_tui.core.limits import ActiveTime

    clock = FakeClock(100.0)
    active = ActiveTime(clock, 100.0)
    clock.advance(3)
    active.hold(True)
    clock.advance(50)
    assert active() == 3
    active.hold(False)
    clock.advance(2)
    assert active() == 5
