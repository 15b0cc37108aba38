"""The gateway through the official SDKs, streaming and not: events, tokens, dedup of history, tool-result matching."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import openai
import pytest

from tests.gateway.conftest import REAL_KEY, Rig

TOOLS_ANTHROPIC = [{"name": n, "description": n, "input_schema": {"type": "object"}} for n in ("shell", "edit")]
TOOLS_OPENAI = [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}} for n in ("shell", "edit")]
TOOLS_RESPONSES = [{"type": "function", "name": n, "parameters": {"type": "object"}} for n in ("shell", "edit")]


def _anthropic_conversation(rig: Rig, stream: bool) -> list[Any]:
    client = anthropic.Anthropic(base_url=rig.gateway.url, api_key=rig.gateway.dummy_key, max_retries=0)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Add a checkout button."}]
    replies = []
    while True:
        if stream:
            with client.messages.stream(model="claude-sonnet-5-5", max_tokens=512, messages=messages, tools=TOOLS_ANTHROPIC) as s:
                reply = s.get_final_message()
        else:
            reply = client.messages.create(model="claude-sonnet-5-5", max_tokens=512, messages=messages, tools=TOOLS_ANTHROPIC)
        replies.append(reply)
        content = [b.model_dump(mode="json", exclude_none=True) for b in reply.content]
        messages.append({"role": "assistant", "content": content})
        calls = [b for b in reply.content if b.type == "tool_use"]
        if not calls:
            return replies
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": c.id, "content": f"output of {c.name}", "is_error": c.name == "edit"}
            for c in calls]})


def _chat_conversation(rig: Rig, stream: bool) -> list[Any]:
    client = openai.OpenAI(base_url=rig.gateway.openai_base_url, api_key=rig.gateway.dummy_key, max_retries=0)
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You build shops."},
                                      {"role": "user", "content": "Add a checkout button."}]
    finals = []
    while True:
        if stream:
            text, calls = "", {}
            for chunk in client.chat.completions.create(model="gpt-4o", messages=messages, tools=TOOLS_OPENAI, stream=True,
                                                        stream_options={"include_usage": True}):
                for choice in chunk.choices:
                    text += choice.delta.content or ""
                    for part in choice.delta.tool_calls or []:
                        call = calls.setdefault(part.index, {"id": "", "name": "", "arguments": ""})
                        call["id"] = part.id or call["id"]
                        call["name"] = (part.function.name if part.function else None) or call["name"]
                        call["arguments"] += (part.function.arguments if part.function else None) or ""
            calls = [calls[i] for i in sorted(calls)]
        else:
            reply = client.chat.completions.create(model="gpt-4o", messages=messages, tools=TOOLS_OPENAI)
            message = reply.choices[0].message
            text = message.content or ""
            calls = [{"id": c.id, "name": c.function.name, "arguments": c.function.arguments} for c in message.tool_calls or []]
        finals.append(text)
        assistant: dict[str, Any] = {"role": "assistant", "content": text}
        if calls:
            assistant["tool_calls"] = [{"id": c["id"], "type": "function",
                                        "function": {"name": c["name"], "arguments": c["arguments"]}} for c in calls]
        messages.append(assistant)
        if not calls:
            return finals
        messages += [{"role": "tool", "tool_call_id": c["id"], "content": f"output of {c['name']}"} for c in calls]


def _responses_conversation(rig: Rig, stream: bool) -> list[Any]:
    client = openai.OpenAI(base_url=rig.gateway.openai_base_url, api_key=rig.gateway.dummy_key, max_retries=0)
    items: list[dict[str, Any]] = [{"type": "message", "role": "user", "content": "Add a checkout button."}]
    finals = []
    while True:
        if stream:
            output = []
            for event in client.responses.create(model="gpt-4o", input=items, tools=TOOLS_RESPONSES, stream=True):
                if event.type == "response.completed":
                    output = [o.model_dump(mode="json", exclude_none=True) for o in event.response.output]
        else:
            reply = client.responses.create(model="gpt-4o", input=items, tools=TOOLS_RESPONSES)
            output = [o.model_dump(mode="json", exclude_none=True) for o in reply.output]
        finals.append(output)
        items += output
        calls = [o for o in output if o["type"] == "function_call"]
        if not calls:
            return finals
        items += [{"type": "function_call_output", "call_id": c["call_id"], "output": f"output of {c['name']}"} for c in calls]


CONVERSATIONS = {"anthropic": _anthropic_conversation, "chat": _chat_conversation, "responses": _responses_conversation}


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("protocol", sorted(CONVERSATIONS))
def test_a_three_turn_conversation_becomes_each_turn_once(rig, protocol: str, stream: bool) -> None:
    r = rig()
    CONVERSATIONS[protocol](r, stream)

    messages = r.seen.wait_for("model_message", 4)  # the user's message and three replies
    assistant = [m for m in messages if m.role == "assistant"]
    assert [m.text for m in assistant] == ["Let me look at the files first.", "Now the edit.", "All done: checkout works."]
    assert [(m.tokens_in, m.tokens_out) for m in assistant] == [(120, 30), (200, 40), (300, 10)]
    assert all(m.latency is not None and m.latency > 0 for m in assistant)
    if stream:  # time to first token is measured on streams only, and comes before the end
        assert all(m.ttft is not None and 0 < m.ttft <= m.latency for m in assistant)
    else:
        assert all(m.ttft is None for m in assistant)
    # The history is resent with every request, yet the user's message is recorded once.
    assert [m.text for m in messages if m.role == "user"] == ["Add a checkout button."]

    calls = r.seen.of("tool_call")
    assert [(c.tool, c.arguments) for c in calls] == [
        ("shell", {"command": "ls -la"}), ("edit", {"path": "app.py", "text": "x = 1"}), ("shell", {"command": "pytest -q"})]
    assert r.seen.turns("tool_call") == [1, 2, 2]
    results = r.seen.of("tool_result")
    assert [(x.call_id, x.tool, x.output) for x in results] == [(c.call_id, c.tool, f"output of {c.tool}") for c in calls]
    assert r.seen.turns("tool_result") == [1, 2, 2]  # a result belongs to the turn of its call
    assert all(x.duration > 0 for x in results)
    if protocol == "anthropic":
        assert [x.is_error for x in results] == [False, True, False]
    # The upstream got the real key; the harness only ever held the gateway's dummy key.
    assert {q.api_key for q in r.fake.requests} == {REAL_KEY}
    assert r.gateway.dummy_key != REAL_KEY
    assert REAL_KEY not in json.dumps([e.to_dict() for e, _ in r.seen.events])


def test_reasoning_and_cost_are_recorded(rig) -> None:
    r = rig()
    _anthropic_conversation(r, stream=True)
    first = r.seen.of("model_message")[1]
    assert first.reasoning == "The shop needs a checkout."
    assert first.model == "claude-sonnet-5-5"
    assert first.cost_usd == pytest.approx((120 * 2.0 + 30 * 10.0) / 1e6)
