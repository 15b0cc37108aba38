"""Event lists for trace tests: a small fixed episode and a seeded random one with awkward cases."""

from __future__ import annotations

import random

from stripebench_tui.core.events import (
    EpisodeEnd,
    Event,
    GraderVerdict,
    Header,
    ModelMessage,
    Operator,
    Service,
    StripeObject,
    ToolCall,
    ToolResult,
)
from stripebench_tui.core.state import EpisodeState


def header(**kw) -> Header:
    return Header(env="checkout-migration", agent="test", model="m-1", started="2025-11-20T14:02:11Z", **kw)


def small_episode() -> list[Event]:
    """Three turns with a message, a call and its result, an object and a verdict each, then the end."""
    events: list[Event] = [Service(t=0.1, turn=0, service="app", status="healthy")]
    for turn in (1, 2, 3):
        t = float(turn * 10)
        events += [
            ModelMessage(t=t, turn=turn, text=f"step {turn}", tokens_in=100 * turn, tokens_out=10, cost_usd=0.001),
            ToolCall(t=t + 1, turn=turn, call_id=f"c{turn}", tool="shell", arguments={"command": f"echo {turn}"}),
            ToolResult(t=t + 2, turn=turn, call_id=f"c{turn}", tool="shell", output=f"{turn}\n", duration=1.0, exit_code=0),
            StripeObject(t=t + 3, turn=turn, object_id="cs_test_1", object_type="checkout.session",
                         change="created" if turn == 1 else "updated", data={"status": "open" if turn < 3 else "complete"}),
            GraderVerdict(t=t + 4, turn=turn, criterion="paid", status="pass" if turn == 3 else "fail", weight=1.0),
        ]
    events.append(EpisodeEnd(t=40.0, turn=3, reason="agent_done", score=1.0, passed=True))
    return events


def random_episode(seed: int, turns: int = 40) -> list[Event]:
    """Contiguous turns with calls answered in later turns, rejections, services and an unfinished call at the end."""
    rnd = random.Random(seed)
    events: list[Event] = []
    t = 0.0
    open_calls: list[str] = []
    n = 0
    for turn in range(0, turns):
        for _ in range(rnd.randint(1, 6)):
            t += rnd.random()
            kind = rnd.choice(["msg", "call", "result", "obj", "verdict", "service", "reject"])
            if kind == "msg":
                events.append(ModelMessage(t=t, turn=turn, text=f"m{n}", tokens_in=rnd.randint(0, 500),
                                           tokens_out=rnd.randint(0, 50), cost_usd=0.0005))
            elif kind == "call":
                cid = f"call{n}"
                open_calls.append(cid)
                events.append(ToolCall(t=t, turn=turn, call_id=cid,
                                       tool=rnd.choice(["shell", "files_read", "browser_run"]), arguments={"n": n}))
            elif kind == "result" and open_calls:
                cid = open_calls.pop(rnd.randrange(len(open_calls)))
                events.append(ToolResult(t=t, turn=turn, call_id=cid, tool="shell", output="o" * rnd.randint(0, 50),
                                         exit_code=rnd.choice([0, 0, 1]), duration=rnd.random()))
            elif kind == "reject" and open_calls:
                events.append(Operator(t=t, turn=turn, action="reject", call_id=open_calls.pop()))
            elif kind == "obj":
                oid = f"cs_{rnd.randint(0, 5)}"
                events.append(StripeObject(t=t, turn=turn, object_id=oid, object_type="checkout.session",
                                           change="updated", data={"v": n}))
            elif kind == "verdict":
                events.append(GraderVerdict(t=t, turn=turn, criterion=f"c{rnd.randint(0, 3)}",
                                            status=rnd.choice(["pass", "fail", "pending"]),
                                            weight=rnd.choice([1.0, 2.0]), evidence={"n": n}))
            elif kind == "service":
                events.append(Service(t=t, turn=turn, service=rnd.choice(["app", "emulator"]),
                                      status=rnd.choice(["log", "healthy", "log"]), text=f"line {n}"))
            n += 1
    if rnd.random() < 0.8:
        events.append(EpisodeEnd(t=t + 1, turn=turns - 1, reason="max_turns"))
    for seq, ev in enumerate(events):
        ev.seq = seq
    return events


def summary(s: EpisodeState) -> dict:
    """Everything a pane reads from a state, as plain comparable data."""
    return {
        "turns": [
            (t.index, t.start, t.end, t.first_seq, t.last_seq, [m.text for m in t.messages],
             [(c.call.call_id, c.status, c.result.seq if c.result else None) for c in t.calls],
             list(t.object_ids), [v.seq for v in t.verdict_changes], t.tokens_in, t.tokens_out, round(t.cost_usd, 9),
             [o.seq for o in t.operator_actions])
            for t in s.turns
        ],
        "objects": {k: (o.object_type, o.data, o.first_turn, o.last_turn, o.first_seq, o.last_seq, o.changes, o.deleted)
                    for k, o in s.objects.items()},
        "verdicts": {k: (c.status, c.weight, c.evidence, c.changed_turn, c.changed_seq, [(h.seq, h.status) for h in c.history])
                     for k, c in s.verdicts.items()},
        "totals": (s.totals.tokens_in, s.totals.tokens_out, round(s.totals.cost_usd, 9), s.totals.tool_calls,
                   round(s.totals.tool_time, 9), s.totals.model_messages),
        "services": dict(s.services),
        "service_log": [e.seq for e in s.service_log],
        "operator": [o.seq for o in s.operator_actions],
        "pending": list(s.pending_calls),
        "ended": s.ended.seq if s.ended else None,
        "last": (s.last_seq, s.last_t, s.events_applied),
        "score": s.score(),
    }
