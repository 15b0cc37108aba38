"""The reducer: a pure function of events, tested without an event loop and with an injected clock."""

from __future__ import annotations

from stripebench_tui.core.events import (
    EpisodeEnd,
    GraderVerdict,
    Header,
    ModelMessage,
    Operator,
    Service,
    StripeObject,
    ToolCall,
    ToolResult,
)
from stripebench_tui.core.state import FAILED, OK, REJECTED, RUNNING, Reducer, reduce


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def call(seq: int, turn: int, call_id: str, tool: str = "shell", t: float | None = None, actor: str = "agent") -> ToolCall:
    return ToolCall(seq=seq, t=seq if t is None else t, turn=turn, call_id=call_id, tool=tool,
                    arguments={"command": "ls"}, actor=actor)


def result(seq: int, turn: int, call_id: str, **kw) -> ToolResult:
    return ToolResult(seq=seq, t=kw.pop("t", seq), turn=turn, call_id=call_id, tool=kw.pop("tool", "shell"), **kw)


def test_tool_call_runs_until_its_result_and_the_status_follows_the_result() -> None:
    r = Reducer(clock=FakeClock())
    r.apply(call(0, 1, "a"))
    assert r.state.current_call is not None and r.state.current_call.status == RUNNING
    assert r.state.turns[0].status == RUNNING
    r.apply(result(1, 1, "a", output="ok", duration=0.5))
    assert r.state.current_call is None
    assert r.state.turns[0].calls[0].status == OK
    assert r.state.turns[0].calls[0].duration == 0.5
    r.apply(call(2, 1, "b"))
    r.apply(result(3, 1, "b", exit_code=2, duration=0.25))
    r.apply(call(4, 1, "c"))
    r.apply(result(5, 1, "c", is_error=True))
    statuses = [c.status for c in r.state.turns[0].calls]
    assert statuses == [OK, FAILED, FAILED]
    assert r.state.turns[0].status == FAILED
    assert r.state.totals.tool_calls == 3
    assert r.state.totals.tool_time == 0.75


def test_reject_and_episode_end_settle_pending_calls() -> None:
    s = reduce([
        call(0, 1, "a"),
        Operator(seq=1, t=1, turn=1, action="reject", call_id="a", text="not that"),
        call(2, 2, "b"),
        EpisodeEnd(seq=3, t=3, turn=2, reason="stopped"),
    ])
    assert s.turns[0].calls[0].status == REJECTED
    assert s.turns[0].actor == "agent"  # a rejection is recorded, but the agent made the call
    assert s.turns[1].calls[0].status == FAILED
    assert s.pending_calls == {}
    assert s.ended is not None and s.ended.reason == "stopped"


def test_result_without_its_call_is_shown_on_its_own() -> None:
    s = reduce([result(5, 3, "orphan", tool="files_read", output="x")])
    (view,) = s.turns[0].calls
    assert view.call.tool == "files_read" and view.call.call_id == "orphan" and view.status == OK


def test_tokens_and_cost_add_up_per_turn_and_in_total() -> None:
    s = reduce([
        ModelMessage(seq=0, t=1, turn=1, text="a", tokens_in=100, tokens_out=10, cost_usd=0.01),
        ModelMessage(seq=1, t=2, turn=1, text="b", tokens_in=None, tokens_out=5),
        ModelMessage(seq=2, t=3, turn=2, text="c", tokens_in=300, tokens_out=30, cost_usd=0.02),
    ])
    assert (s.turns[0].tokens_in, s.turns[0].tokens_out) == (100, 15)
    assert (s.totals.tokens_in, s.totals.tokens_out, s.totals.model_messages) == (400, 45, 3)
    assert abs(s.totals.cost_usd - 0.03) < 1e-12


def test_stripe_objects_keep_their_latest_data_and_history_counts() -> None:
    s = reduce([
        StripeObject(seq=0, t=0, turn=1, object_id="cs_1", object_type="checkout.session", data={"status": "open"}),
        StripeObject(seq=1, t=1, turn=1, object_id="cs_1", change="updated", data={"status": "open", "x": 1}),
        StripeObject(seq=2, t=2, turn=2, object_id="cs_1", change="updated", data={"status": "complete"},
                     event_type="checkout.session.completed"),
        StripeObject(seq=3, t=3, turn=2, object_id="pi_1", data={"object": "payment_intent", "status": "succeeded"}),
        StripeObject(seq=4, t=4, turn=3, object_id="pi_1", change="deleted"),
    ])
    cs = s.objects["cs_1"]
    assert cs.data == {"status": "complete"} and cs.changes == 3
    assert (cs.first_turn, cs.last_turn, cs.last_event_type) == (1, 2, "checkout.session.completed")
    assert s.turns[0].object_ids == ["cs_1"]  # listed once per turn however often it changed
    pi = s.objects["pi_1"]
    assert pi.object_type == "payment_intent"  # taken from data["object"] when the event has none
    assert pi.deleted and pi.data == {"object": "payment_intent", "status": "succeeded"}
    groups = s.objects_by_type()
    assert list(groups) == ["checkout.session", "payment_intent"]


def test_objects_by_type_lists_newest_first() -> None:
    s = reduce([StripeObject(seq=i, t=i, turn=1, object_id=f"cs_{i}", object_type="checkout.session") for i in range(3)])
    assert [o.id for o in s.objects_by_type()["checkout.session"]] == ["cs_2", "cs_1", "cs_0"]


def test_verdict_history_and_the_turn_that_last_changed_it() -> None:
    s = reduce([
        GraderVerdict(seq=0, t=0, turn=0, criterion="paid", status="pending", weight=2.0),
        GraderVerdict(seq=1, t=1, turn=3, criterion="paid", status="fail", evidence={"n": 0}),
        GraderVerdict(seq=2, t=2, turn=4, criterion="paid", status="fail", evidence={"n": 1}),
        GraderVerdict(seq=3, t=3, turn=5, criterion="paid", status="pass", weight=2.0),
        GraderVerdict(seq=4, t=4, turn=5, criterion="ui", status="fail", weight=1.0),
    ])
    paid = s.verdicts["paid"]
    assert [h.status for h in paid.history] == ["pending", "fail", "fail", "pass"]
    assert (paid.changed_turn, paid.changed_seq) == (5, 3)
    assert s.score() == 2.0 / 3.0
    assert s.verdict_counts() == {"pass": 1, "fail": 1, "pending": 0, "error": 0}
    # the unchanged "fail" at turn 4 does not move changed_turn
    s2 = reduce([
        GraderVerdict(seq=0, t=0, turn=3, criterion="paid", status="fail"),
        GraderVerdict(seq=1, t=1, turn=4, criterion="paid", status="fail", evidence={"n": 1}),
    ])
    assert s2.verdicts["paid"].changed_turn == 3 and s2.verdicts["paid"].evidence == {"n": 1}


def test_final_score_comes_from_the_episode_end_when_present() -> None:
    events = [GraderVerdict(seq=0, t=0, turn=1, criterion="a", status="pass")]
    assert reduce(events).score() == 1.0
    assert reduce(events + [EpisodeEnd(seq=1, t=1, turn=1, score=0.25)]).score() == 0.25
    assert reduce([]).score() is None


def test_elapsed_uses_the_injected_clock_while_live_and_stops_at_the_end() -> None:
    clock = FakeClock()
    r = Reducer(clock=clock)
    assert r.elapsed() == 0.0
    r.apply(ModelMessage(seq=0, t=4.0, turn=1, text="hi"))
    clock.now += 2.5
    assert r.elapsed() == 6.5
    r.apply(EpisodeEnd(seq=1, t=7.0, turn=1, reason="agent_done"))
    clock.now += 100
    assert r.elapsed() == 7.0


def test_keep_output_false_drops_text_but_keeps_the_size() -> None:
    r = Reducer(keep_output=False)
    r.apply(call(0, 1, "a"))
    r.apply(result(1, 1, "a", output="é" * 10))
    res = r.state.turns[0].calls[0].result
    assert res is not None and res.output == "" and res.output_bytes == 20
    kept = reduce([call(0, 1, "a"), result(1, 1, "a", output="abc")]).turns[0].calls[0].result
    assert kept is not None and kept.output == "abc"


def test_turns_sorted_and_found_by_number_even_when_events_arrive_out_of_order() -> None:
    s = reduce([
        ModelMessage(seq=0, t=0, turn=2, text="b"),
        ModelMessage(seq=1, t=1, turn=0, text="setup"),
        ModelMessage(seq=2, t=2, turn=5, text="c"),
        ModelMessage(seq=3, t=3, turn=2, text="b2"),
    ])
    assert [t.index for t in s.turns] == [0, 2, 5]
    two = s.turn(2)
    assert two is not None and [m.text for m in two.messages] == ["b", "b2"]
    assert (two.start, two.end, two.duration) == (0, 3, 3)
    assert s.turn(3) is None and s.turn(99) is None
    assert s.turn(0) is not None and s.turn(0).actor == "setup"


def test_turn_actor_is_the_operator_when_the_operator_acted() -> None:
    s = reduce([call(0, 1, "a", actor="operator"), ModelMessage(seq=1, t=1, turn=2, role="operator", text="try again"),
                ModelMessage(seq=2, t=2, turn=3, text="ok")])
    assert [t.actor for t in s.turns] == ["operator", "operator", "agent"]


def test_services_status_and_log() -> None:
    s = reduce([
        Service(seq=0, t=0, turn=0, service="app", status="log", text="booting"),
        Service(seq=1, t=1, turn=0, service="app", status="healthy"),
        Service(seq=2, t=2, turn=1, service="app", status="log", text="GET / 200"),
        Service(seq=3, t=3, turn=1, service="db", status="exited", exit_code=1),
    ])
    assert s.services == {"app": "healthy", "db": "exited"}
    assert [e.text for e in s.service_log][:1] == ["booting"] and len(s.service_log) == 4


def test_header_sets_the_header_but_is_not_counted_as_an_event() -> None:
    s = reduce([Header(env="e"), ModelMessage(seq=0, t=1, turn=1)])
    assert s.header is not None and s.header.env == "e"
    assert s.events_applied == 1 and s.last_seq == 0 and s.last_t == 1
