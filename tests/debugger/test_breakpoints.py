"""Breakpoints: parsing, matching over hand-made events, and a live driver pausing at the right turn."""

from __future__ import annotations

import asyncio
import io

import pytest

from stripebench_tui.core import operator as op
from stripebench_tui.core.breakpoints import BreakpointError, BreakpointSet, hits_in, parse
from stripebench_tui.core.events import Finding, GraderVerdict, ModelMessage, Operator, StripeRequest, ToolCall
from stripebench_tui.runtime.printer import LivePrinter
from tests.driver.scripted import ScriptedAgent, call, make_driver, turn, wait_status


def test_parse_each_kind():
    assert parse("tool shell command=*curl*").args == (("command", "*curl*"),)
    r = parse("request POST /v1/refunds* 4xx")
    assert (r.method, r.glob, r.status) == ("POST", "/v1/refunds*", "4xx")
    v = parse("verdict fail checkout_*")
    assert (v.to, v.glob) == ("fail", "checkout_*")
    assert parse("finding 400-as-success").glob == "400-as-success"
    b = parse("tokens > 500")
    assert (b.kind, b.budget, b.limit, b.strict) == ("budget", "tokens", 500.0, True)


@pytest.mark.parametrize("bad", ["", "tool", "tool x=1", "request PUTS", "frobnicate", "verdict fail a b", "tool shell nokey"])
def test_bad_expressions_are_one_line_errors(bad):
    with pytest.raises(BreakpointError) as err:
        parse(bad)
    assert "\n" not in str(err.value)


def test_a_finding_breakpoint_names_a_known_detector():
    known = ["400-as-success", "lost-focus"]
    assert parse("finding 400-*", detectors=known).glob == "400-*"
    assert parse("finding", detectors=known).glob == "*"
    with pytest.raises(BreakpointError) as err:
        parse("finding nope", detectors=known)
    assert "no detector matches 'nope'" in str(err.value) and "400-as-success, lost-focus" in str(err.value)
    assert parse("finding nope").glob == "nope"  # without the registry (a recorded trace's own names), any glob


def _events():
    evs = [
        ToolCall(seq=0, turn=1, tool="shell", arguments={"command": "ls"}),
        ToolCall(seq=1, turn=2, tool="shell", arguments={"command": "curl -X POST https://api.stripe.com"}),
        StripeRequest(seq=2, turn=2, method="POST", path="/v1/checkout/sessions", status=400),
        StripeRequest(seq=3, turn=3, method="POST", path="/v1/checkout/sessions", status=200),
        GraderVerdict(seq=4, turn=3, criterion="session_created", status="pending"),
        GraderVerdict(seq=5, turn=4, criterion="session_created", status="fail"),
        GraderVerdict(seq=6, turn=5, criterion="session_created", status="fail"),
        Finding(seq=7, turn=5, detector="400-as-success", message="claimed done after a 400"),
        ModelMessage(seq=8, turn=6, tokens_in=300, tokens_out=300, cost_usd=0.02),
        ModelMessage(seq=9, turn=7, tokens_in=300, tokens_out=300, cost_usd=0.02),
    ]
    for ev in evs:
        ev.t = float(ev.seq)
    return evs


@pytest.mark.parametrize(("expr", "turns"), [
    ("tool shell", [1, 2]),
    ("tool shell command=*curl*", [2]),
    ("tool browser_*", []),
    ("request POST /v1/checkout/* 4xx", [2]),
    ("request err", [2]),
    ("request 2xx", [3]),
    ("verdict fail", [4]),  # the repeated fail is not a change
    ("verdict any", [4]),  # pending after pending (the implicit start) is not a change either
    ("finding 400-*", [5]),
    ("finding lost-focus", []),
    ("tokens>=1000", [7]),  # crossed once
    ("cost>0.03", [7]),
    ("turns>=3", [3]),
    ("time>=8", [6]),
])
def test_matching_over_a_hand_made_stream(expr, turns):
    hits = hits_in(_events(), BreakpointSet.from_exprs([expr]))
    assert [h.turn for h in hits] == turns


@pytest.mark.parametrize(("expr", "t", "reason"), [
    ("time>=3", 3.40014, "time reached 3.4 s"),
    ("cost>=0.01", 0.0, "cost reached $0.0412"),
    ("cost>=1", 0.0, "cost reached $12.50"),
    ("tokens>=1000", 0.0, "tokens reached 12,345"),
    ("turns>=2", 0.0, "turns reached 2"),
])
def test_budget_hits_read_as_durations_costs_and_counts(expr, t, reason):
    cost = 12.5 if expr == "cost>=1" else 0.0412345
    ev = ModelMessage(seq=0, turn=2, t=t, tokens_in=12000, tokens_out=345, cost_usd=cost)
    [hit] = hits_in([ev], BreakpointSet.from_exprs([expr]))
    assert hit.reason.endswith(f"({expr}): {reason}")


def test_remove_stops_matching_and_numbers_are_not_reused():
    bps = BreakpointSet.from_exprs(["tool shell", "finding"])
    assert bps.remove(1) is not None and bps.remove(1) is None
    assert bps.add("tool files").id == 3
    assert bps.listing() == ["#2 finding", "#3 tool files"]


async def test_a_live_hit_pauses_before_the_next_model_call():
    agent = ScriptedAgent([turn(call("c1", cmd="ls")), turn(call("c2", "files", path="x")), turn(call("c3", cmd="pwd")),
                           turn(done=True)])
    driver, seen = make_driver(agent, breakpoints=BreakpointSet.from_exprs(["tool files"]))
    task = asyncio.create_task(driver.run())
    await wait_status(driver, op.PAUSED)
    assert len(agent.seen) == 2  # turn 2 ran the files call; turn 3's model call waits
    hit = next(e for e in seen.events if isinstance(e, Operator) and e.action == "break_hit")
    assert hit.details["turn"] == 2 and "tool call files" in hit.text
    driver.remove_breakpoint(1)
    driver.add_breakpoint("nonsense here")
    driver.resume()
    assert (await asyncio.wait_for(task, 5)).reason == "agent_done"
    recorded = [(e.action, e.details.get("id"), bool(e.details.get("ignored")))
                for e in seen.events if isinstance(e, Operator) and e.action.startswith("break_")]
    assert recorded == [("break_add", 1, False), ("break_hit", 1, False), ("break_remove", 1, False),
                        ("break_add", None, True)]


async def test_hits_at_the_episode_end_are_recorded_without_pausing():
    # The agent's last turn calls files (a hit), and a final hook publishes a finding (the detectors' end): neither
    # has a next model call to pause before, and both hits are still recorded, before episode_end.
    agent = ScriptedAgent([turn(call("c1", cmd="ls")), turn(call("c2", "files", path="x"), done=True)])

    async def final_finding(driver):
        await driver.bus.publish(Finding(detector="400-as-success", message="said done after a 400"))

    driver, seen = make_driver(agent, breakpoints=BreakpointSet.from_exprs(["tool files", "finding 400-*"]),
                               final_hooks=[final_finding])
    end = await asyncio.wait_for(driver.run(), 5)
    assert end.reason == "agent_done"
    hits = [e for e in seen.events if isinstance(e, Operator) and e.action == "break_hit"]
    assert [(h.details["id"], h.details["turn"], h.details["paused"]) for h in hits] == [(1, 2, False), (2, 2, False)]
    assert seen.types()[-1] == "episode_end" and op.PAUSED not in [e.text for e in seen.events if op.is_status(e)]
    printed = io.StringIO()
    printer = LivePrinter(printed)
    for ev in seen.events:
        printer(ev)
    assert "breakpoint #2 (finding 400-*)" in printed.getvalue() and "type resume" not in printed.getvalue()

