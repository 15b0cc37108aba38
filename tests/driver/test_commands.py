"""Operator commands: pause, resume, step, inject, operator tool calls, approval, stop."""

from __future__ import annotations

import asyncio

import pytest

from stripebench_tui.core import operator as op
from stripebench_tui.core.events import ModelMessage, Operator, ToolCall, ToolResult
from stripebench_tui.core.state import REJECTED, reduce

from .scripted import ScriptedAgent, call, make_driver, turn, wait_status, wait_until


def actions(events):
    """Operator actions taken by a person (not status changes), as (action, call_id) pairs."""
    return [(e.action, e.call_id) for e in events if isinstance(e, Operator) and not op.is_status(e)]


def statuses(events):
    return [e.text for e in events if op.is_status(e)]


async def test_start_paused_waits_for_resume():
    agent = ScriptedAgent([turn(done=True)])
    driver, seen = make_driver(agent, start_paused=True)
    task = asyncio.create_task(driver.run())
    await wait_status(driver, op.PAUSED)
    for _ in range(20):
        await asyncio.sleep(0)
    assert agent.seen == []  # nothing happens while paused
    driver.resume()
    end = await asyncio.wait_for(task, 5)
    assert end.reason == "agent_done"
    assert statuses(seen.events) == ["paused", "running", "ended"]
    assert actions(seen.events) == [("resume", "")]


async def test_pause_during_a_turn_takes_effect_at_the_turn_end():
    agent = ScriptedAgent([])
    driver, seen = make_driver(agent)

    def first(observations):
        driver.pause()  # arrives while the agent is thinking
        return turn(call("c1", cmd="ls"))

    agent.steps = [first, turn(done=True)]
    task = asyncio.create_task(driver.run())
    await wait_status(driver, op.PAUSED)
    assert len(agent.seen) == 1
    assert [e.type for e in seen.events if e.type == "tool_result"] == ["tool_result"]  # turn 1 finished
    pause = next(e for e in seen.events if isinstance(e, Operator) and e.action == "pause")
    assert pause.turn == 1
    driver.resume()
    assert (await asyncio.wait_for(task, 5)).reason == "agent_done"
    assert statuses(seen.events) == ["running", "paused", "running", "ended"]


async def test_step_runs_exactly_one_agent_turn_each_time():
    agent = ScriptedAgent([turn(call("c1")), turn(call("c2")), turn(call("c3")), turn(done=True)])
    driver, seen = make_driver(agent, start_paused=True)
    task = asyncio.create_task(driver.run())
    await wait_status(driver, op.PAUSED)
    for n in (1, 2):
        driver.step()
        await wait_until(lambda n=n: len(agent.seen) == n and driver.status == op.PAUSED)
        for _ in range(20):
            await asyncio.sleep(0)
        assert len(agent.seen) == n  # and no further
    driver.resume()
    assert (await asyncio.wait_for(task, 5)).reason == "agent_done"
    assert len(agent.seen) == 4
    assert actions(seen.events) == [("step", ""), ("step", ""), ("resume", "")]


async def test_inject_reaches_the_agent_and_is_recorded_as_an_operator_turn():
    agent = ScriptedAgent([turn(call("c1")), turn(done=True)])
    driver, seen = make_driver(agent, start_paused=True)
    task = asyncio.create_task(driver.run())
    await wait_status(driver, op.PAUSED)
    driver.inject("Use the emulator at $STRIPE_API_BASE", kind="hint")
    driver.step()
    await wait_until(lambda: len(agent.seen) == 1 and driver.status == op.PAUSED)
    driver.inject("a note for turn two")
    driver.resume()
    await asyncio.wait_for(task, 5)

    assert [(o.kind, o.text) for o in agent.seen[0]] == [("operator_message", "Use the emulator at $STRIPE_API_BASE")]
    assert [(o.kind, o.text) for o in agent.seen[1]] == [("tool_result", "ran "), ("operator_message", "a note for turn two")]
    injects = [e for e in seen.events if isinstance(e, Operator) and e.action == "inject"]
    assert [(i.text, i.details, i.turn) for i in injects] == [
        ("Use the emulator at $STRIPE_API_BASE", {"kind": "hint"}, 1),
        ("a note for turn two", {"kind": "note"}, 3),
    ]
    notes = [e for e in seen.events if isinstance(e, ModelMessage) and e.role == "operator"]
    assert [(n.text, n.turn) for n in notes] == [("Use the emulator at $STRIPE_API_BASE", 1), ("a note for turn two", 3)]
    state = reduce(seen.events)
    assert [(t.index, t.actor) for t in state.turns] == [(0, "setup"), (1, "operator"), (2, "agent"),
                                                         (3, "operator"), (4, "agent")]


async def test_an_inject_sent_while_the_agent_thinks_goes_into_the_next_turn():
    agent = ScriptedAgent([])
    driver, seen = make_driver(agent)

    def first(observations):
        driver.inject("hurry up")
        return turn(call("c1"))

    agent.steps = [first, turn(done=True)]
    await driver.run()
    assert [o.kind for o in agent.seen[1]] == ["tool_result", "operator_message"]
    inject = next(e for e in seen.events if isinstance(e, Operator) and e.action == "inject")
    last_result = max(e.seq for e in seen.events if isinstance(e, ToolResult))
    assert inject.seq > last_result and inject.turn == 2  # its own operator turn between agent turns 1 and 3


async def test_an_operator_tool_call_is_recorded_with_the_operator_as_actor():
    agent = ScriptedAgent([turn(call("c1", cmd="ls")), turn(done=True)])
    driver, seen = make_driver(agent, start_paused=True)
    task = asyncio.create_task(driver.run())
    await wait_status(driver, op.PAUSED)
    driver.run_tool("shell", {"cmd": "cat .env"})
    driver.run_tool("files", {"path": "app.py"})
    driver.resume()
    await asyncio.wait_for(task, 5)

    calls = [e for e in seen.events if isinstance(e, ToolCall)]
    assert [(c.call_id, c.actor, c.turn) for c in calls] == [("op-1", "operator", 1), ("op-2", "operator", 1), ("c1", "agent", 2)]
    results = {e.call_id: e for e in seen.events if isinstance(e, ToolResult)}
    assert results["op-1"].output == "ran cat .env" and results["op-2"].output == "viewed app.py"
    assert actions(seen.events) == [("tool_call", "op-1"), ("tool_call", "op-2"), ("resume", "")]
    assert driver.executor.calls[:2] == [("shell", {"cmd": "cat .env"}), ("files", {"path": "app.py"})]
    told = [o.text for o in agent.seen[0]]
    assert told[0].startswith('The operator ran the tool shell {"cmd": "cat .env"}') and told[0].endswith("ran cat .env")
    assert reduce(seen.events).turns[1].actor == "operator"


async def run_with_approval(policy, decide, steps=None):
    """Run an episode whose agent calls shell then files; ``decide(driver, call_id)`` answers each approval."""
    agent = ScriptedAgent(steps or [turn(call("c1", "shell", cmd="rm -rf /"), call("c2", "files", path="a.py")), turn(done=True)])
    driver, seen = make_driver(agent, approval=op.ApprovalPolicy.parse(policy))
    task = asyncio.create_task(driver.run())
    asked = []
    while not task.done():
        done, _ = await asyncio.wait({task, asyncio.create_task(wait_status(driver, op.WAITING_FOR_APPROVAL))}, timeout=5,
                                     return_when=asyncio.FIRST_COMPLETED)
        assert done, "neither finished nor asked for approval"
        if driver.status == op.WAITING_FOR_APPROVAL and driver.pending_call is not None:
            cid = driver.pending_call.call_id
            if asked and asked[-1] == cid:
                await asyncio.sleep(0.001)
                continue
            asked.append(cid)
            decide(driver, cid)
    return task.result(), agent, driver, seen, asked


async def test_approval_always_with_approve_runs_each_call_after_approval():
    end, agent, driver, seen, asked = await run_with_approval("always", lambda d, cid: d.approve())
    assert end.reason == "agent_done"
    assert asked == ["c1", "c2"]
    assert actions(seen.events) == [("approve", "c1"), ("approve", "c2")]
    assert statuses(seen.events) == ["running", "waiting_for_approval", "running", "waiting_for_approval", "running", "ended"]
    waits = [e for e in seen.events if op.is_status(e) and e.text == op.WAITING_FOR_APPROVAL]
    assert [w.call_id for w in waits] == ["c1", "c2"]
    # The approval sits between the call and its result.
    order = [(e.type, getattr(e, "call_id", "")) for e in seen.events
             if e.type in ("tool_call", "tool_result") or (e.type == "operator" and e.action == "approve")]
    assert order == [("tool_call", "c1"), ("operator", "c1"), ("tool_result", "c1"), ("tool_call", "c2"),
                     ("operator", "c2"), ("tool_result", "c2")]


async def test_approval_by_pattern_only_stops_matching_tools():
    end, agent, driver, seen, asked = await run_with_approval("shell*,browser_*", lambda d, cid: d.approve(cid))
    assert asked == ["c1"]
    assert driver.executor.calls == [("shell", {"cmd": "rm -rf /"}), ("files", {"path": "a.py"})]


async def test_edit_runs_the_call_with_the_changed_arguments():
    end, agent, driver, seen, asked = await run_with_approval("shell", lambda d, cid: d.edit({"cmd": "ls"}))
    assert driver.executor.calls[0] == ("shell", {"cmd": "ls"})
    edit = next(e for e in seen.events if isinstance(e, Operator) and e.action == "edit")
    assert edit.call_id == "c1" and edit.details == {"arguments": {"cmd": "ls"}, "previous": {"cmd": "rm -rf /"}}
    assert agent.seen[1][0].text == "ran ls"


async def test_reject_skips_the_call_and_the_agent_sees_why():
    end, agent, driver, seen, asked = await run_with_approval("shell", lambda d, cid: d.reject("too dangerous"))
    assert end.reason == "agent_done"
    assert driver.executor.calls == [("files", {"path": "a.py"})]
    rejected = agent.seen[1][0]
    assert (rejected.kind, rejected.call_id, rejected.tool, rejected.is_error) == ("rejected", "c1", "shell", True)
    assert "too dangerous" in rejected.text
    assert [e.call_id for e in seen.events if isinstance(e, ToolResult)] == ["c2"]
    reject = next(e for e in seen.events if isinstance(e, Operator) and e.action == "reject")
    assert (reject.call_id, reject.text) == ("c1", "too dangerous")
    assert reduce(seen.events).turns[1].calls[0].status == REJECTED


async def test_a_decision_for_another_call_or_with_nothing_pending_is_recorded_as_ignored():
    def decide(d, cid):
        d.approve("c999")  # not the pending one
        d.approve()

    agent = ScriptedAgent([turn(call("c1")), turn(done=True)])
    driver, seen = make_driver(agent)
    driver.approve()  # nothing pending at all: recorded, ignored
    await driver.run()
    ignored = [e for e in seen.events if isinstance(e, Operator) and e.action == "approve"]
    assert ignored[0].details == {"ignored": "no tool call is waiting for approval"}

    end, agent, driver, seen, asked = await run_with_approval("always", decide)
    approvals = [e for e in seen.events if isinstance(e, Operator) and e.action == "approve"]
    assert approvals[0].details == {"ignored": "the pending call is c1, not c999"}
    assert approvals[1].call_id == "c1" and approvals[1].details == {}


async def test_stop_while_the_agent_thinks_cancels_it():
    agent = ScriptedAgent([])
    driver, seen = make_driver(agent)

    async def think_forever(observations):
        driver.stop("enough")
        await asyncio.Event().wait()

    agent.steps = [turn(call("c1")), think_forever]
    end = await asyncio.wait_for(driver.run(), 5)
    assert end.reason == "stopped" and agent.cancelled and agent.closed == 1
    stop = next(e for e in seen.events if isinstance(e, Operator) and e.action == "stop")
    assert stop.text == "enough" and stop.turn == 2
    assert seen.events[-1] is end


async def test_stop_during_a_tool_call_and_while_waiting_for_approval():
    started = asyncio.Event()

    async def slow_tool(arguments):
        started.set()
        await asyncio.Event().wait()

    agent = ScriptedAgent([turn(call("c1")), turn(done=True)])
    driver, seen = make_driver(agent)
    driver.executor.handlers["shell"] = slow_tool
    task = asyncio.create_task(driver.run())
    await asyncio.wait_for(started.wait(), 5)
    driver.stop()
    assert (await asyncio.wait_for(task, 5)).reason == "stopped"
    assert reduce(seen.events).ended.reason == "stopped"

    end, agent, driver, seen, asked = await run_with_approval("always", lambda d, cid: d.stop())
    assert end.reason == "stopped" and driver.executor.calls == []


@pytest.mark.parametrize("command", ["pause", "step"])
async def test_pause_or_step_while_waiting_for_approval_pauses_after_the_turn(command):
    def decide(d, cid):
        getattr(d, command)()
        d.approve()

    agent = ScriptedAgent([turn(call("c1")), turn(done=True)])
    driver, seen = make_driver(agent, approval=op.ALWAYS)
    task = asyncio.create_task(driver.run())
    await wait_status(driver, op.WAITING_FOR_APPROVAL)
    decide(driver, "c1")
    await wait_status(driver, op.PAUSED)
    assert len(agent.seen) == 1
    driver.resume()
    assert (await asyncio.wait_for(task, 5)).reason == "agent_done"
