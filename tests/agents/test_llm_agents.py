"""Both LLM agents end to end through the real SDKs against the local fake model server."""

from __future__ import annotations

import socket
import time
from typing import Any

import pytest

from conftest import MODELS
from stripebench_tui.agents import create_agent
from stripebench_tui.core.agent import AgentError, Observation, ToolRequest
from stripebench_tui.errors import UserError
from stripebench_tui.testing.fake_models import Fault, RecordedRequest
from stripebench_tui.testing.fake_wire import ScriptedCall, ScriptedTurn

PROTOCOLS = ["anthropic", "openai"]
# List prices (USD per million tokens) of the MODELS used, written out here to check the table independently.
LIST_PRICE = {"anthropic": (2.0, 10.0), "openai": (2.5, 10.0)}


def sent_tool_results(request: RecordedRequest) -> list[tuple[str, str, bool]]:
    """(call id, text, is_error) of the tool results at the end of a request, in either protocol."""
    messages = request.body["messages"]
    if request.protocol == "anthropic":
        return [
            (b["tool_use_id"], b["content"], b.get("is_error", False))
            for b in messages[-1]["content"]
            if b["type"] == "tool_result"
        ]
    last_assistant = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
    tools = [m for m in messages[last_assistant + 1 :] if m["role"] == "tool"]
    return [(m["tool_call_id"], m["content"], m["content"].startswith("Error:")) for m in tools]


def sent_user_text(request: RecordedRequest) -> str:
    """All plain user text in the last user message of a request."""
    last = [m for m in request.body["messages"] if m["role"] == "user"][-1]
    if isinstance(last["content"], str):
        return last["content"]
    return "\n".join(b["text"] for b in last["content"] if b["type"] == "text")


def reply_call_ids(request: RecordedRequest) -> list[str]:
    """Tool call ids the fake put in its reply to a request."""
    if request.protocol == "anthropic":
        return [b["id"] for b in request.reply["content"] if b["type"] == "tool_use"]
    return [c["id"] for c in request.reply["choices"][0]["message"].get("tool_calls", [])]


def reply_usage(request: RecordedRequest) -> tuple[int, int]:
    usage = request.reply["usage"]
    if request.protocol == "anthropic":
        return usage["input_tokens"], usage["output_tokens"]
    return usage["prompt_tokens"], usage["completion_tokens"]


def free_closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


THREE_TURNS = [
    ScriptedTurn("Looking around.", [ScriptedCall("shell", {"command": "ls"})]),
    ScriptedTurn(
        "Reading the app and running the tests.",
        [ScriptedCall("view_file", {"path": "app.py"}), ScriptedCall("shell", {"command": "pytest -q"})],
    ),
    ScriptedTurn("Done: the checkout button is in place."),
]


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_three_turn_conversation(protocol, fake_server, agent_for, task):
    fake = fake_server(THREE_TURNS)
    agent = await agent_for(protocol, fake)

    first = await agent.next_turn([])
    (ls_id,) = reply_call_ids(fake.answered()[0])
    assert first.tool_calls == [ToolRequest(ls_id, "shell", {"command": "ls"})]
    assert not first.done and first.text == "Looking around."

    second = await agent.next_turn([Observation("tool_result", "app.py\nREADME.md", ls_id, "shell")])
    assert sent_tool_results(fake.answered()[1]) == [(ls_id, "app.py\nREADME.md", False)]
    view_id, test_id = reply_call_ids(fake.answered()[1])
    assert [(c.call_id, c.tool, c.arguments) for c in second.tool_calls] == [
        (view_id, "view_file", {"path": "app.py"}),
        (test_id, "shell", {"command": "pytest -q"}),
    ]

    third = await agent.next_turn(
        [
            Observation("tool_result", "print('shop')", view_id, "view_file"),
            Observation("tool_result", "1 failed, 3 passed", test_id, "shell", is_error=True),
        ]
    )
    results = sent_tool_results(fake.answered()[2])
    assert [(i, e) for i, _, e in results] == [(view_id, False), (test_id, True)]
    assert results[0][1] == "print('shop')" and "1 failed, 3 passed" in results[1][1]
    assert third.done and third.tool_calls == [] and third.text == "Done: the checkout button is in place."

    # The task reached the model: PROBLEM.md in the system prompt, the tools by name.
    first_body = fake.answered()[0].body
    system = first_body["system"] if protocol == "anthropic" else first_body["messages"][0]["content"]
    assert task.problem in system and "no tool calls" in system
    names = [t["name"] if protocol == "anthropic" else t["function"]["name"] for t in first_body["tools"]]
    assert names == ["shell", "view_file"]

    per_in, per_out = LIST_PRICE[protocol]
    for turn, request in zip([first, second, third], fake.answered(), strict=True):
        tokens_in, tokens_out = reply_usage(request)
        assert (turn.tokens_in, turn.tokens_out) == (tokens_in, tokens_out)
        assert turn.model == MODELS[protocol]
        assert turn.cost_usd == pytest.approx((tokens_in * per_in + tokens_out * per_out) / 1e6)
    # Each request carries the whole conversation so far.
    assert len(fake.answered()[2].body["messages"]) > len(fake.answered()[1].body["messages"])


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_rate_limit_retried_with_retry_after_then_success(protocol, fake_server, agent_for):
    fake = fake_server([ScriptedTurn("All done.")], faults=[Fault(status=429, count=2, retry_after=0.05)])
    retries: list[tuple[int, Any, float]] = []
    agent = await agent_for(protocol, fake, on_retry=lambda attempt, error, delay: retries.append((attempt, error, delay)))
    started = time.monotonic()
    turn = await agent.next_turn([])
    assert turn.done and turn.text == "All done."
    assert [(a, d) for a, _, d in retries] == [(1, 0.05), (2, 0.05)]  # retry-after, not the 0.01 s backoff
    assert all(getattr(e, "status_code", None) == 429 for _, e, _ in retries)
    assert time.monotonic() - started >= 0.1
    assert [r.status for r in fake.requests] == [429, 429, 200]


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_server_error_forever_gives_agent_error_after_bounded_tries(protocol, fake_server, agent_for):
    fake = fake_server([ScriptedTurn("never sent")], faults=[Fault(status=500, count=-1, message="boom")])
    delays: list[float] = []

    async def on_retry(attempt, error, delay):  # async callbacks are awaited too
        delays.append(delay)

    agent = await agent_for(protocol, fake, max_tries=3, on_retry=on_retry)
    with pytest.raises(AgentError) as caught:
        await agent.next_turn([])
    message = str(caught.value)
    assert "HTTP 500" in message and "boom" in message and "3 tries" in message and "\n" not in message
    assert len(fake.requests) == 3
    assert delays == [0.01, 0.02]  # exponential backoff from backoff_base


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_retry_after_beyond_limit_fails_at_once(protocol, fake_server, agent_for):
    fake = fake_server([ScriptedTurn("x")], faults=[Fault(status=429, count=-1, retry_after=3600)])
    agent = await agent_for(protocol, fake, retry_after_max=10)
    with pytest.raises(AgentError, match="asked to wait 3600s"):
        await agent.next_turn([])
    assert len(fake.requests) == 1


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_hung_request_times_out_and_is_retried(protocol, fake_server, agent_for):
    fake = fake_server([ScriptedTurn("Recovered.")], faults=[Fault(hang=10, count=1)])
    retries: list[Any] = []
    agent = await agent_for(protocol, fake, timeout=0.3, on_retry=lambda a, e, d: retries.append(e))
    started = time.monotonic()
    turn = await agent.next_turn([])
    assert turn.text == "Recovered." and turn.done
    assert len(retries) == 1 and "Timeout" in type(retries[0]).__name__
    assert time.monotonic() - started < 3


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_unreachable_provider_is_a_quick_agent_error(protocol, agent_for):
    port = free_closed_port()
    url = f"http://127.0.0.1:{port}" + ("/v1" if protocol == "openai" else "")
    retries: list[int] = []
    agent = await agent_for(protocol, None, base_url=url, on_retry=lambda a, e, d: retries.append(a))
    started = time.monotonic()
    with pytest.raises(AgentError) as caught:
        await agent.next_turn([])
    assert time.monotonic() - started < 3
    message = str(caught.value)
    assert f"cannot connect to http://127.0.0.1:{port}/" in message and "3 tries" in message and "\n" not in message
    assert retries == [1, 2]


@pytest.mark.parametrize(("protocol", "variable"), [("anthropic", "ANTHROPIC_API_KEY"), ("openai", "OPENAI_API_KEY")])
def test_missing_key_is_a_user_error_naming_the_variable(protocol, variable, monkeypatch):
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(UserError, match=variable):
        create_agent(protocol)


@pytest.mark.parametrize(("protocol", "variable"), [("anthropic", "ANTHROPIC_API_KEY"), ("openai", "OPENAI_API_KEY")])
async def test_key_and_base_url_come_from_the_environment(protocol, variable, monkeypatch, fake_server, task):
    fake = fake_server([ScriptedTurn("ok")])
    monkeypatch.setenv(variable, "sk-from-env")
    prefix = "ANTHROPIC" if protocol == "anthropic" else "OPENAI"
    monkeypatch.setenv(f"{prefix}_BASE_URL", fake.url if protocol == "anthropic" else fake.openai_base_url)
    monkeypatch.setenv(f"{prefix}_MODEL", "model-from-env")
    agent = create_agent(protocol)
    assert agent.model == "model-from-env"
    await agent.start(task)
    try:
        assert (await agent.next_turn([])).done
    finally:
        await agent.close()
    assert fake.requests[0].api_key == "sk-from-env" and fake.requests[0].body["model"] == "model-from-env"
    assert agent.secrets == ["sk-from-env"]  # what the runtime registers for redaction


def test_a_local_server_without_a_key_registers_no_placeholder_secret(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    local = create_agent("openai", base_url="http://127.0.0.1:9/v1")
    assert local.options.api_key and local.secrets == []  # the SDK's stand-in key is not a secret to redact
    assert create_agent("anthropic", api_key="given-key-123").secrets == ["given-key-123"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_rejected_key_is_not_retried(protocol, fake_server, agent_for):
    fake = fake_server([ScriptedTurn("x")], api_key="sk-right")
    agent = await agent_for(protocol, fake, api_key="sk-wrong")
    with pytest.raises(AgentError, match="HTTP 401.*check the API key"):
        await agent.next_turn([])
    assert len(fake.requests) == 1


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_rejected_call_operator_message_and_missing_result(protocol, fake_server, agent_for):
    fake = fake_server(
        [
            ScriptedTurn("Two calls.", [ScriptedCall("shell", {"command": "rm -rf /"}),
                                        ScriptedCall("shell", {"command": "ls"})]),
            ScriptedTurn("Understood."),
        ]
    )
    agent = await agent_for(protocol, fake)
    first = await agent.next_turn([])
    rm_id, ls_id = (c.call_id for c in first.tool_calls)
    await agent.next_turn(
        [
            Observation("rejected", "destructive", rm_id, "shell"),
            Observation("operator_message", "Use the test-mode key."),
        ]
    )
    request = fake.answered()[1]
    results = {i: (text, err) for i, text, err in sent_tool_results(request)}
    assert "rejected" in results[rm_id][0] and "destructive" in results[rm_id][0]
    assert results[ls_id][0].endswith("this tool call was not run.")  # the driver sent nothing for it
    if protocol == "anthropic":  # OpenAI tool messages carry no error flag; the text says it
        assert results[rm_id][1] is True and results[ls_id][1] is True
    assert "Use the test-mode key." in sent_user_text(request)


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_reasoning_unknown_model_and_odd_tool_names(protocol, fake_server, task, agent_for):
    from stripebench_tui.core.tool_types import ToolSpec

    task.tools.append(ToolSpec("browser.navigate", "Open a URL.", {"type": "object", "properties": {"url": {"type": "string"}}}))
    fake = fake_server(
        [
            ScriptedTurn("Opening.", [ScriptedCall("browser_navigate", {"url": "http://shop"})],
                         reasoning="Check the page first."),
            ScriptedTurn("Fine."),
        ]
    )
    agent = await agent_for(protocol, fake, model="some-local-model")
    turn = await agent.next_turn([])
    assert turn.reasoning == "Check the page first."
    assert turn.tool_calls[0].tool == "browser.navigate"  # the wire name mapped back to the tool's own name
    assert turn.cost_usd is None and turn.tokens_in and turn.tokens_out  # no price known, tokens still counted
    await agent.next_turn([Observation("tool_result", "Shop", turn.tool_calls[0].call_id, "browser.navigate")])
    if protocol == "anthropic":  # thinking blocks must go back to the API unchanged
        assistant = fake.answered()[1].body["messages"][1]
        assert assistant["content"][0] == {"type": "thinking", "thinking": "Check the page first.", "signature": "sig_fake_1"}


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_unknown_option_is_a_user_error(protocol):
    with pytest.raises(UserError, match="no option modle"):
        create_agent(protocol, api_key="k", modle="x")


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_price_option_overrides_the_table(protocol, fake_server, agent_for):
    fake = fake_server([ScriptedTurn("ok", usage=(1000, 100))])
    agent = await agent_for(protocol, fake, model="my-model", price=(1.0, 2.0))
    turn = await agent.next_turn([])
    assert (turn.tokens_in, turn.tokens_out) == (1000, 100)
    assert turn.cost_usd == pytest.approx((1000 * 1.0 + 100 * 2.0) / 1e6)


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_operator_tool_calls_reach_the_model_as_text(protocol, fake_server, agent_for):
    fake = fake_server([ScriptedTurn("Looking.", [ScriptedCall("shell", {"command": "ls"})]), ScriptedTurn("Seen.")])
    agent = await agent_for(protocol, fake)
    first = await agent.next_turn([])
    (call,) = first.tool_calls
    await agent.next_turn(
        [
            Observation("tool_result", "app.py", call.call_id, "shell"),
            Observation("tool_result", "customers: 3", "", "stripe_list"),  # the operator's own call
        ]
    )
    request = fake.answered()[1]
    assert [i for i, _, _ in sent_tool_results(request)] == [call.call_id]
    assert "The operator ran stripe_list:\ncustomers: 3" in sent_user_text(request)
