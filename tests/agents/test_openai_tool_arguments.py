"""OpenAI-compatible servers send tool arguments as a JSON string; broken ones go back to the model as errors."""

from __future__ import annotations

from stripebench_tui.core.agent import Observation
from stripebench_tui.testing.fake_wire import ScriptedCall, ScriptedTurn


def tool_messages(request) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in request.body["messages"] if m["role"] == "tool"}


async def test_malformed_arguments_become_an_error_result_not_a_crash(fake_server, agent_for):
    fake = fake_server(
        [
            ScriptedTurn(
                "Three calls.",
                [
                    ScriptedCall("shell", raw_arguments='{"command": "ls"'),  # cut off
                    ScriptedCall("shell", raw_arguments='["ls"]'),  # JSON, but not an object
                    ScriptedCall("view_file", {"path": "app.py"}),
                ],
            ),
            ScriptedTurn("Retrying properly.", [ScriptedCall("shell", {"command": "ls"})]),
            ScriptedTurn("Done."),
        ]
    )
    agent = await agent_for("openai", fake)
    first = await agent.next_turn([])
    broken_id, list_id, view_id = (c["id"] for c in fake.answered()[0].reply["choices"][0]["message"]["tool_calls"])
    # Only the well-formed call reaches the driver.
    assert [(c.call_id, c.tool, c.arguments) for c in first.tool_calls] == [(view_id, "view_file", {"path": "app.py"})]
    assert not first.done

    second = await agent.next_turn([Observation("tool_result", "print('shop')", view_id, "view_file")])
    sent = tool_messages(fake.answered()[1])
    assert sent[view_id] == "print('shop')"
    assert sent[broken_id].startswith("Error:") and "not valid JSON" in sent[broken_id] and '{"command": "ls"' in sent[broken_id]
    assert sent[list_id].startswith("Error:") and "not a JSON object" in sent[list_id]
    # The history the server sees keeps valid JSON so strict servers (vLLM, Ollama) accept the request.
    history = [m for m in fake.answered()[1].body["messages"] if m["role"] == "assistant"][0]["tool_calls"]
    assert {c["id"]: c["function"]["arguments"] for c in history}[broken_id] == "{}"
    assert second.tool_calls[0].arguments == {"command": "ls"}

    third = await agent.next_turn([Observation("tool_result", "app.py", second.tool_calls[0].call_id, "shell")])
    assert third.done


async def test_a_turn_of_only_broken_calls_is_answered_on_the_next_turn(fake_server, agent_for):
    fake = fake_server(
        [
            ScriptedTurn("", [ScriptedCall("shell", raw_arguments="command=ls")]),
            ScriptedTurn("Giving up."),
        ]
    )
    agent = await agent_for("openai", fake)
    first = await agent.next_turn([])
    assert first.tool_calls == [] and not first.done  # not finished: the model still owes a proper call
    second = await agent.next_turn([])
    (content,) = tool_messages(fake.answered()[1]).values()
    assert content.startswith("Error:") and "command=ls" in content
    assert second.done


async def test_empty_arguments_mean_no_arguments(fake_server, agent_for):
    fake = fake_server([ScriptedTurn("", [ScriptedCall("shell", raw_arguments="")]), ScriptedTurn("ok")])
    agent = await agent_for("openai", fake)
    turn = await agent.next_turn([])
    assert turn.tool_calls[0].arguments == {}


async def test_local_server_needs_no_key(fake_server, agent_for, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    fake = fake_server([ScriptedTurn("ok")])
    agent = await agent_for("openai", fake, api_key=None, model="qwen3-coder")
    turn = await agent.next_turn([])
    assert turn.done and turn.model == "qwen3-coder" and turn.cost_usd is None
    body = fake.answered()[0].body
    assert "max_tokens" in body and "max_completion_tokens" not in body
