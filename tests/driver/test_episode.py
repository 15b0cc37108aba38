"""A whole episode through the driver: event order, observations, reducer state, hooks, failures."""

from __future__ import annotations

import asyncio
from itertools import pairwise

from stripebench_tui.core import operator as op
from stripebench_tui.core.agent import AgentError
from stripebench_tui.core.driver import FinalScore
from stripebench_tui.core.events import EpisodeEnd, GraderVerdict, ModelMessage, Operator, Service, ToolCall, ToolResult
from stripebench_tui.core.state import FAILED, OK, reduce

from .scripted import FakeClock, ScriptedAgent, ScriptedTools, call, echo_tools, make_driver, turn


def kinds(events):
    """Event types with status events shown by their status, to read sequences easily."""
    return [f"status:{e.text}" if op.is_status(e) else e.type for e in events]


async def test_a_normal_episode_publishes_every_step_in_order():
    clock = FakeClock()

    def second(observations):
        clock.advance(2.0)
        return turn(call("c3", "shell", cmd="make test"), text="now test", tokens_in=30, tokens_out=7, cost_usd=0.02)

    agent = ScriptedAgent(
        [
            turn(call("c1", "shell", cmd="ls"), call("c2", "files", path="app.py"), text="look around", tokens_in=100,
                 tokens_out=20, cost_usd=0.1),
            second,
            turn(text="all done", done=True, tokens_in=5, tokens_out=1),
        ]
    )
    driver, seen = make_driver(agent, clock=clock)
    end = await driver.run()

    assert end.reason == "agent_done" and end.error == ""
    assert kinds(seen.events) == [
        "status:running",
        "model_message", "tool_call", "tool_result", "tool_call", "tool_result",
        "model_message", "tool_call", "tool_result",
        "model_message",
        "status:ended", "episode_end",
    ]  # fmt: skip
    assert [e.seq for e in seen.events] == list(range(len(seen.events)))
    assert [e.turn for e in seen.events] == [0, 1, 1, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    assert all(a.t <= b.t for a, b in pairwise(seen.events))
    assert seen.events[6].t == 2.0

    # The agent got the task with the executor's tools, then each turn's results.
    assert [t.name for t in agent.task.tools] == ["shell", "files"]
    assert agent.seen[0] == []
    assert [(o.kind, o.call_id, o.text) for o in agent.seen[1]] == [
        ("tool_result", "c1", "ran ls"),
        ("tool_result", "c2", "viewed app.py"),
    ]
    assert agent.closed == 1

    calls = [e for e in seen.events if isinstance(e, ToolCall)]
    assert calls[0].server == "scripted" and calls[0].arguments == {"cmd": "ls"}
    state = reduce(seen.events)
    assert [t.index for t in state.turns] == [0, 1, 2, 3]
    assert [c.status for c in state.turns[1].calls] == [OK, OK]
    assert state.totals.tokens_in == 135 and state.totals.tokens_out == 28
    assert abs(state.totals.cost_usd - 0.12) < 1e-9
    assert state.totals.tool_calls == 3 and state.totals.tool_time == 1.5
    assert state.ended is not None and state.ended.reason == "agent_done"
    assert op.status_from_state(state) == op.ENDED
    assert driver.usage.agent_turns == 3


async def test_a_tool_error_is_an_observation_not_the_end():
    tools = echo_tools()
    from stripebench_tui.core.tool_types import ToolOutcome

    tools.handlers["shell"] = lambda a: ToolOutcome(text="boom", is_error=True, exit_code=2)
    agent = ScriptedAgent([turn(call("c1", cmd="false")), turn(done=True)])
    driver, seen = make_driver(agent, tools)
    end = await driver.run()
    assert end.reason == "agent_done"
    assert [(o.text, o.is_error) for o in agent.seen[1]] == [("boom", True)]
    result = next(e for e in seen.events if isinstance(e, ToolResult))
    assert result.exit_code == 2 and reduce(seen.events).turns[1].calls[0].status == FAILED


async def test_turn_end_hooks_can_publish_and_final_hooks_score_the_episode():
    agent = ScriptedAgent([turn(call("c1", cmd="a")), turn(call("c2", cmd="b")), turn(done=True)])
    hooks_at = []

    async def live_grader(driver):
        hooks_at.append(driver.turn)
        await driver.bus.publish(GraderVerdict(criterion="ran",
                                               status="pass" if driver.turn >= 2 else "fail", trigger="turn_end"))

    async def final_grader(driver):
        await driver.bus.publish(GraderVerdict(criterion="ran", status="pass", trigger="final", final=True))
        return FinalScore(score=0.75, passed=False)

    driver, seen = make_driver(agent, turn_end_hooks=[live_grader], final_hooks=[final_grader])
    end = await driver.run()
    assert hooks_at == [1, 2, 3]
    assert (end.score, end.passed) == (0.75, False)
    verdicts = [e for e in seen.events if isinstance(e, GraderVerdict)]
    assert [v.trigger for v in verdicts] == ["turn_end"] * 3 + ["final"]
    assert all(v.seq < end.seq for v in verdicts)
    assert seen.events[-1] is end


async def test_a_failing_hook_is_reported_and_the_episode_goes_on():
    async def broken(driver):
        raise RuntimeError("grader bug")

    agent = ScriptedAgent([turn(call("c1")), turn(done=True)])
    driver, seen = make_driver(agent, turn_end_hooks=[broken])
    end = await driver.run()
    assert end.reason == "agent_done"
    logs = [e for e in seen.events if isinstance(e, Service)]
    assert len(logs) == 2 and "grader bug" in logs[0].text and logs[0].service == "driver"


async def test_an_agent_error_ends_the_episode_with_its_reason():
    agent = ScriptedAgent([turn(call("c1")), AgentError("provider unreachable after 5 retries")])
    driver, seen = make_driver(agent)
    end = await driver.run()
    assert end.reason == "error"
    assert end.error == "agent error: provider unreachable after 5 retries"
    assert seen.events[-1] == end and agent.closed == 1
    assert [e.type for e in seen.events].count("tool_result") == 1


async def test_an_unexpected_agent_exception_is_recorded_too():
    agent = ScriptedAgent([KeyError("oops")])
    driver, seen = make_driver(agent)
    end = await driver.run()
    assert end.reason == "error" and end.error == "KeyError: 'oops'"


async def test_a_crashing_tool_executor_ends_the_episode_and_closes_the_call():
    def crash(arguments):
        raise ConnectionResetError("shell server died")

    agent = ScriptedAgent([turn(call("c1", cmd="ls"), call("c2", cmd="never"))])
    driver, seen = make_driver(agent, ScriptedTools({"shell": crash}))
    end = await driver.run()
    assert end.reason == "error"
    assert "shell server died" in end.error and "shell" in end.error
    results = [e for e in seen.events if isinstance(e, ToolResult)]
    assert len(results) == 1 and results[0].is_error and results[0].call_id == "c1"
    assert [e.call_id for e in seen.events if isinstance(e, ToolCall)] == ["c1"]  # c2 never started
    assert reduce(seen.events).turns[1].calls[0].status == FAILED


async def test_cancelling_the_driver_task_still_records_the_end():
    started = asyncio.Event()

    async def hang(observations):
        started.set()
        await asyncio.Event().wait()

    agent = ScriptedAgent([turn(call("c1")), hang])
    driver, seen = make_driver(agent)
    task = asyncio.create_task(driver.run())
    await asyncio.wait_for(started.wait(), 5)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    else:  # pragma: no cover - the test fails below
        raise AssertionError("run() swallowed the cancellation")
    await driver.bus.drain(timeout=1)
    assert isinstance(seen.events[-1], EpisodeEnd)
    assert (seen.events[-1].reason, seen.events[-1].error) == ("stopped", "cancelled")
    assert agent.cancelled and agent.closed == 1


async def test_status_changes_reach_callbacks_and_events():
    agent = ScriptedAgent([turn(done=True)])
    got = []
    driver, seen = make_driver(agent, on_status=[got.append])
    await driver.run()
    assert got == ["running", "ended"]
    assert op.status_from_events(seen.events) == "ended"
    statuses = [e for e in seen.events if isinstance(e, Operator)]
    assert [s.details for s in statuses] == [{"by": "driver"}] * 2
    assert isinstance(seen.events[-3], ModelMessage)


async def test_a_watcher_publishing_during_delivery_tags_objects_with_the_turn_that_caused_them():
    from stripebench_tui.core.events import StripeObject

    agent = ScriptedAgent([turn(call("c1", cmd="create product")), turn(call("c2", cmd="create price")), turn(done=True)])
    driver, seen = make_driver(agent)

    async def watcher(event):
        if isinstance(event, ToolResult):
            await asyncio.sleep(0)  # a poll of /v1/events
            await driver.bus.publish(StripeObject(object_id=f"obj_{event.call_id}", object_type="product"))

    driver.bus.subscribe(watcher, name="watcher")
    await driver.run()
    objects = [e for e in seen.events if isinstance(e, StripeObject)]
    results = {e.call_id: e for e in seen.events if isinstance(e, ToolResult)}
    assert [(o.object_id, o.turn) for o in objects] == [("obj_c1", 1), ("obj_c2", 2)]
    for o in objects:
        assert results[o.object_id.removeprefix("obj_")].seq < o.seq < seen.events[-1].seq
    assert [e.seq for e in seen.events] == list(range(len(seen.events)))
    assert reduce(seen.events).turns[1].object_ids == ["obj_c1"]


async def test_calls_without_an_id_get_one_and_done_with_calls_runs_them_first():
    agent = ScriptedAgent([turn(call(""), call(""), done=True)])
    driver, seen = make_driver(agent)
    end = await driver.run()
    assert end.reason == "agent_done"
    assert [e.call_id for e in seen.events if isinstance(e, ToolResult)] == ["t1-1", "t1-2"]
    assert all(c.status == OK for c in reduce(seen.events).turns[1].calls)
