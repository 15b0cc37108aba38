"""Reducer handling of the driver's status reports and the operator's decisions on a pending call."""

from stripebench_tui.core.events import Operator, ToolCall, ToolResult
from stripebench_tui.core.operator import status_from_state
from stripebench_tui.core.state import REJECTED, reduce


def _call(seq, call_id="c1", args=None):
    return ToolCall(seq=seq, t=seq, turn=1, call_id=call_id, tool="shell", arguments=args or {"command": "rm -rf /"})


def test_status_events_feed_the_status_bar_not_the_operator_log():
    state = reduce([
        Operator(seq=0, t=0, turn=0, action="status", text="running"),
        _call(1),
        Operator(seq=2, t=1, turn=1, action="status", text="waiting_for_approval", call_id="c1"),
    ], clock=lambda: 0.0)
    assert state.status == "waiting_for_approval"
    assert state.awaiting_call == "c1"
    assert state.operator_actions == []
    assert status_from_state(state) == "waiting_for_approval"


def test_edit_shows_the_arguments_that_ran_and_reject_marks_the_call():
    state = reduce([
        _call(0, "c1"),
        Operator(seq=1, t=1, turn=1, action="edit", call_id="c1", details={"arguments": {"command": "ls"}}),
        ToolResult(seq=2, t=2, turn=1, call_id="c1", tool="shell", output="a\n"),
        _call(3, "c2"),
        Operator(seq=4, t=3, turn=1, action="reject", call_id="c2", text="too dangerous"),
    ], clock=lambda: 0.0)
    first, second = state.turns[0].calls
    assert first.call.arguments == {"command": "ls"}
    assert second.status == REJECTED
    assert [a.action for a in state.operator_actions] == ["edit", "reject"]


def test_an_ignored_decision_changes_nothing():
    state = reduce([
        _call(0, "c1"),
        Operator(seq=1, t=1, turn=1, action="reject", call_id="c1", details={"ignored": "nothing pending"}),
    ], clock=lambda: 0.0)
    assert state.turns[0].calls[0].status == "running"
