"""Tool calls in every corner the reducer handles: late, rejected (here and in another turn), edited, orphan results,
ids reused, open at the end, results after it, turns out of order. Shared by the streaming folds' tests."""

from __future__ import annotations

from stripebench_tui.core.events import (
    EpisodeEnd,
    Event,
    Finding,
    GraderVerdict,
    ModelMessage,
    Operator,
    StripeObject,
    StripeRequest,
    ToolCall,
    ToolResult,
)


def _call(seq: int, turn: int, call_id: str, tool: str = "shell", actor: str = "agent") -> ToolCall:
    return ToolCall(seq=seq, t=seq, turn=turn, call_id=call_id, tool=tool, arguments={"n": seq}, actor=actor)


def _result(seq: int, turn: int, call_id: str, tool: str = "shell", failed: bool = False) -> ToolResult:
    return ToolResult(seq=seq, t=seq, turn=turn, call_id=call_id, tool=tool, exit_code=1 if failed else 0, duration=0.5)


def corner_events() -> list[Event]:
    return [
        _call(0, 1, "late", "view_file"), _result(1, 2, "late", "view_file", failed=True),  # answered a turn later
        _call(2, 2, "rej-here", "edit"), Operator(seq=3, t=3, turn=2, action="reject", call_id="rej-here"),
        _result(4, 2, "rej-here", "edit", failed=True),  # filed under the rejected call: not a call, not a failure
        _call(5, 3, "rej-there", "edit"), Operator(seq=6, t=6, turn=3, action="reject", call_id="rej-there"),
        _result(7, 4, "rej-there", "edit", failed=True),  # rejected in another turn: a call of its own
        _call(8, 4, "kept", "shell"), Operator(seq=9, t=9, turn=4, action="reject", call_id="kept", details={"ignored": True}),
        Operator(seq=10, t=10, turn=4, action="status", text="paused"),
        _result(11, 4, "kept", "shell"),
        _result(12, 5, "never-called", "browser_click", failed=True), _result(13, 5, "kept", "shell"),  # orphans
        _call(14, 6, "twice", "shell"), _call(15, 6, "twice", "shell"),  # the same id while open
        _call(16, 7, "hanging", "browser_click"),
        # turns out of order: alpha is called first in turn 9, zeta first in turn 8, which comes first in the table
        _call(17, 9, "x", "alpha"), _call(18, 8, "z", "zeta"), _call(19, 8, "y", "alpha"), _call(20, 8, "w", "zeta"),
        ModelMessage(seq=21, t=21, turn=8, tokens_in=5, tokens_out=7, cost_usd=0.25),
        StripeRequest(seq=22, t=22, turn=8, status=402, source=""), StripeRequest(seq=23, t=23, turn=8, status=200, source="app"),
        GraderVerdict(seq=24, t=24, turn=8, criterion="paid", status="fail", weight=2.0),
        GraderVerdict(seq=25, t=25, turn=9, criterion="paid", status="pass", weight=3.0),
        Finding(seq=26, t=26, turn=9, detector="400-as-success"),
        EpisodeEnd(seq=27, t=27, turn=9, reason="max_turns"),  # the calls still open fail here
        _result(28, 9, "hanging", "browser_click"),  # after the end: a call of its own
    ]


def operator_turn() -> list[Event]:
    """An operator's call and message, an edited call's arguments, objects created, changed and deleted."""
    return [
        ModelMessage(seq=0, t=0, turn=1, role="operator", text="try the other route"),
        ModelMessage(seq=1, t=1, turn=1, text="  On it:\n   retrying  "),
        _call(2, 1, "op", "shell", actor="operator"), _result(3, 1, "op"),
        _call(4, 2, "ed", "shell"), Operator(seq=5, t=5, turn=2, action="edit", call_id="ed", details={"arguments": {"n": 99}}),
        _result(6, 2, "ed"),
        StripeObject(seq=7, t=7, turn=2, object_id="cs_1", object_type="", change="created",
                     data={"object": "checkout.session", "a": 1}),
        StripeObject(seq=8, t=8, turn=2, object_id="cs_1", change="updated", data={}),
        StripeObject(seq=9, t=9, turn=2, object_id="pi_1", object_type="payment_intent", change="deleted", data={"b": 2}),
        GraderVerdict(seq=10, t=10, turn=2, criterion="paid", status="fail"),
        GraderVerdict(seq=11, t=11, turn=2, criterion="paid", status="fail"),
        GraderVerdict(seq=12, t=12, turn=3, criterion="paid", status="pass"),
    ]
