"""A forked LLM agent continues with the recorded conversation as its own message list (``continue_from``): its
first request after the fork is the request the recorded agent sent at that point, through the fake model server."""

from __future__ import annotations

import pytest

from stripebench_tui.agents.history import recorded_exchanges
from stripebench_tui.core.agent import Observation
from stripebench_tui.core.events import ModelMessage, Operator, ToolCall, ToolResult
from stripebench_tui.testing.fake_wire import ScriptedCall, ScriptedTurn

PROTOCOLS = ["anthropic", "openai"]
SCRIPT = [
    ScriptedTurn("Looking around.", [ScriptedCall("shell", {"command": "ls"})]),
    ScriptedTurn("Reading and testing.", [ScriptedCall("view_file", {"path": "app.py"}),
                                          ScriptedCall("shell", {"command": "pytest -q"})]),
    ScriptedTurn("Fixing it.", [ScriptedCall("shell", {"command": "sed -i s/a/b/ app.py"})]),
    ScriptedTurn("Done."),
]
OUTPUTS = {"ls": ("app.py\nREADME.md", False), "app.py": ("print('shop')", False),
           "pytest -q": ("1 failed, 3 passed", True), "sed -i s/a/b/ app.py": ("", False)}


def _output(arguments: dict) -> tuple[str, bool]:
    return OUTPUTS[arguments.get("command") or arguments.get("path")]


async def _record(agent, turns: int) -> list:
    """Play ``turns`` turns against the fake, answering each call from OUTPUTS; the events a trace would hold."""
    events, observations = [], []
    for turn in range(1, turns + 1):
        if turn == 2:  # the operator says something between turns 1 and 2
            events.append(ModelMessage(role="operator", text="Mind the tests.", turn=turn - 1))
            observations.append(Observation("operator_message", "Mind the tests."))
        answer = await agent.next_turn(observations)
        observations = []
        events.append(ModelMessage(role="assistant", text=answer.text, turn=turn))
        for call in answer.tool_calls:
            events.append(ToolCall(call_id=call.call_id, tool=call.tool, arguments=call.arguments, turn=turn))
            text, error = _output(call.arguments)
            events.append(ToolResult(call_id=call.call_id, tool=call.tool, output=text, is_error=error, turn=turn))
            observations.append(Observation("tool_result", text, call.call_id, call.tool, error))
    return events


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("at_turn", [1, 2, 3])
async def test_the_first_request_after_a_fork_carries_the_recorded_conversation(protocol, at_turn, fake_server,
                                                                                agent_for):
    recorded_fake = fake_server(SCRIPT)
    recorded = await agent_for(protocol, recorded_fake)
    events = await _record(recorded, 4)
    fork_fake = fake_server(SCRIPT[at_turn:])
    forked = await agent_for(protocol, fork_fake)
    forked.continue_from(events, at_turn)
    answer = await forked.next_turn([])
    first = fork_fake.answered()[0].body
    original = recorded_fake.answered()[at_turn].body  # what the recorded agent sent for turn at_turn + 1
    assert first["messages"] == original["messages"]
    assert first.get("system") == original.get("system") and first["tools"] == original["tools"]
    assert answer.text == SCRIPT[at_turn].text


def test_recorded_exchanges_owe_the_last_results_and_keep_rejections() -> None:
    events = [
        ModelMessage(role="assistant", text="t1", turn=1),
        ToolCall(call_id="c1", tool="shell", arguments={"command": "rm -rf /"}, turn=1),
        Operator(action="reject", text="no", call_id="c1", turn=1),
        ModelMessage(role="assistant", text="t2", turn=2),
        ToolCall(call_id="c2", tool="shell", arguments={"command": "ls"}, turn=2),
        ToolResult(call_id="c2", tool="shell", output="x", turn=2),
        ModelMessage(role="assistant", text="t3 is after the fork", turn=3),
    ]
    exchanges, owed = recorded_exchanges(events, 2)
    assert [(e.turn, e.text, [c.call_id for c in e.calls]) for e in exchanges] == [(1, "t1", ["c1"]), (2, "t2", ["c2"])]
    assert [(o.kind, o.call_id) for o in exchanges[1].observations] == [("rejected", "c1")]
    assert "rejected" in exchanges[1].observations[0].text and exchanges[1].observations[0].text.endswith("no")
    assert [(o.kind, o.call_id, o.text) for o in owed] == [("tool_result", "c2", "x")]
