"""Approve / edit / reject at the gateway, through the official SDKs, streaming and not, on all three protocols.

A reply carrying a call of a held tool (``shell``) waits at the gateway: the client
has not seen that call (a stream has already delivered the text and the calls
before it), then the operator's decision goes on in the provider's own format:
the original call, the call with new arguments, or a stand-in call whose result
the gateway turns back into the original call rejected, before the model sees it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import anthropic
import openai
import pytest

from stripebench_tui.core import operator as op
from stripebench_tui.gateway.hold import STAND_IN, Holds
from stripebench_tui.testing.fake_wire import ScriptedCall, ScriptedTurn
from tests.gateway.conftest import Rig
from tests.gateway.test_gateway_protocols import TOOLS_ANTHROPIC, TOOLS_OPENAI, TOOLS_RESPONSES

ORIGINAL = {"command": "ls -la"}
EDITED = {"command": "ls -l app.py", "timeout": 5}
REJECTION = op.rejection_text("no listing today")


def script() -> list[ScriptedTurn]:
    return [ScriptedTurn(text="Let me edit, then look.", tool_calls=[ScriptedCall("edit", {"path": "app.py", "text": "x = 1"}),
                                                                    ScriptedCall("shell", ORIGINAL)]),
            ScriptedTurn(text="All done.")]


def result_for(name: str) -> str:
    """What a harness answers for a call: its tool's output, or an error for a tool it does not have."""
    return f"output of {name}" if name in ("edit", "shell") else f"Error: no such tool {name}"


class Client:
    """One protocol's SDK client; ``saw_text``/``saw_held`` are set as the streamed text and the held call arrive."""

    def __init__(self, rig: Rig, stream: bool) -> None:
        self.rig, self.stream = rig, stream
        self.saw_text, self.saw_held = threading.Event(), threading.Event()

    def first(self) -> list[tuple[str, str, dict[str, Any]]]:
        """The first turn: (id, name, arguments) of each call, as the SDK assembled them."""
        raise NotImplementedError

    def second(self) -> None:
        """Send the results back (the next request)."""
        raise NotImplementedError


class AnthropicClient(Client):
    def first(self):
        self.sdk = anthropic.Anthropic(base_url=self.rig.gateway.url, api_key=self.rig.gateway.dummy_key, max_retries=0,
                                  timeout=60)
        self.messages: list[dict[str, Any]] = [{"role": "user", "content": "Look at the shop."}]
        ask = dict(model="claude-sonnet-5-5", max_tokens=512, messages=self.messages, tools=TOOLS_ANTHROPIC)
        if self.stream:
            with self.sdk.messages.stream(**ask) as s:
                for event in s:
                    if event.type == "text":
                        self.saw_text.set()
                    elif event.type == "content_block_start" and getattr(event.content_block, "name", "") == "shell":
                        self.saw_held.set()
                reply = s.get_final_message()
        else:
            reply = self.sdk.messages.create(**ask)
        self.messages.append({"role": "assistant",
                              "content": [b.model_dump(mode="json", exclude_none=True) for b in reply.content]})
        self.calls = [(b.id, b.name, dict(b.input)) for b in reply.content if b.type == "tool_use"]
        return self.calls

    def second(self) -> None:
        self.messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": i, "content": result_for(n)}
                                                          for i, n, _ in self.calls]})
        self.sdk.messages.create(model="claude-sonnet-5-5", max_tokens=512, messages=self.messages, tools=TOOLS_ANTHROPIC)


class ChatClient(Client):
    def first(self):
        self.sdk = openai.OpenAI(base_url=self.rig.gateway.openai_base_url, api_key=self.rig.gateway.dummy_key, max_retries=0,
                                  timeout=60)
        self.messages: list[dict[str, Any]] = [{"role": "user", "content": "Look at the shop."}]
        if self.stream:
            text, parts = "", {}
            for chunk in self.sdk.chat.completions.create(model="gpt-4o", messages=self.messages,
                                                          tools=TOOLS_OPENAI, stream=True):
                for choice in chunk.choices:
                    if choice.delta.content:
                        text += choice.delta.content
                        self.saw_text.set()
                    for part in choice.delta.tool_calls or []:
                        call = parts.setdefault(part.index, {"id": "", "name": "", "arguments": ""})
                        call["id"] = part.id or call["id"]
                        call["name"] = (part.function.name if part.function else None) or call["name"]
                        call["arguments"] += (part.function.arguments if part.function else None) or ""
                        if call["name"] == "shell":
                            self.saw_held.set()
            raw = [parts[i] for i in sorted(parts)]
        else:
            message = self.sdk.chat.completions.create(model="gpt-4o",
                                                       messages=self.messages, tools=TOOLS_OPENAI).choices[0].message
            text = message.content or ""
            raw = [{"id": c.id, "name": c.function.name, "arguments": c.function.arguments} for c in message.tool_calls or []]
        self.messages.append({"role": "assistant", "content": text, "tool_calls": [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}} for c in raw]})
        self.calls = [(c["id"], c["name"], json.loads(c["arguments"])) for c in raw]
        return self.calls

    def second(self) -> None:
        self.messages += [{"role": "tool", "tool_call_id": i, "content": result_for(n)} for i, n, _ in self.calls]
        self.sdk.chat.completions.create(model="gpt-4o", messages=self.messages, tools=TOOLS_OPENAI)


class ResponsesClient(Client):
    def first(self):
        self.sdk = openai.OpenAI(base_url=self.rig.gateway.openai_base_url, api_key=self.rig.gateway.dummy_key, max_retries=0,
                                  timeout=60)
        self.items: list[dict[str, Any]] = [{"type": "message", "role": "user", "content": "Look at the shop."}]
        if self.stream:
            output, streamed = [], {}
            for event in self.sdk.responses.create(model="gpt-4o", input=self.items, tools=TOOLS_RESPONSES, stream=True):
                if event.type == "response.output_text.delta":
                    self.saw_text.set()
                elif event.type == "response.output_item.added" and getattr(event.item, "name", "") == "shell":
                    self.saw_held.set()
                elif event.type == "response.function_call_arguments.delta":
                    streamed[event.output_index] = streamed.get(event.output_index, "") + event.delta
                elif event.type == "response.completed":
                    output = [o.model_dump(mode="json", exclude_none=True) for o in event.response.output]
            # The deltas a client assembles agree with the completed response.
            assert {i: output[i]["arguments"] for i in streamed} == streamed
        else:
            reply = self.sdk.responses.create(model="gpt-4o", input=self.items, tools=TOOLS_RESPONSES)
            output = [o.model_dump(mode="json", exclude_none=True) for o in reply.output]
        self.items += output
        self.calls = [(o["call_id"], o["name"], json.loads(o["arguments"])) for o in output if o["type"] == "function_call"]
        return self.calls

    def second(self) -> None:
        self.items += [{"type": "function_call_output", "call_id": i, "output": result_for(n)} for i, n, _ in self.calls]
        self.sdk.responses.create(model="gpt-4o", input=self.items, tools=TOOLS_RESPONSES)


@contextmanager
def in_thread(holds: Holds, work: Callable[[], Any]) -> Iterator[Future]:
    """Run the client's blocking call on a thread; whatever happens, nothing stays held (the thread can end)."""
    pool = ThreadPoolExecutor(1)
    try:
        yield pool.submit(work)
    finally:
        holds.release_all()
        pool.shutdown(wait=True)


CLIENTS = {"anthropic": AnthropicClient, "chat": ChatClient, "responses": ResponsesClient}


def history(protocol: str, body: dict[str, Any]) -> tuple[list[tuple[str, dict[str, Any]]], list[str]]:
    """The calls (name, arguments) and the results in a request's history, as the model sees them."""
    if protocol == "anthropic":
        blocks = [b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]]
        return ([(b["name"], b["input"]) for b in blocks if b["type"] == "tool_use"],
                [b["content"] for b in blocks if b["type"] == "tool_result"])
    if protocol == "chat":
        calls = [c["function"] for m in body["messages"] for c in m.get("tool_calls") or []]
        results = [m["content"] for m in body["messages"] if m["role"] == "tool"]
        return [(f["name"], json.loads(f["arguments"])) for f in calls], results
    return ([(i["name"], json.loads(i["arguments"])) for i in body["input"] if i.get("type") == "function_call"],
            [i["output"] for i in body["input"] if i.get("type") == "function_call_output"])


@pytest.mark.parametrize("action", ["approve", "edit", "reject"])
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("protocol", sorted(CLIENTS))
def test_a_held_call_waits_for_the_operator_and_the_decision_reaches_the_client(rig, protocol: str, stream: bool,
                                                                                 action: str) -> None:
    held, announced = [], threading.Event()
    holds = Holds(lambda tool: tool == "shell", on_held=lambda exchange: (held.append(exchange), announced.set()))
    r = rig(script(), holds=holds)
    client = CLIENTS[protocol](r, stream)
    with in_thread(holds, client.first) as first:
        assert announced.wait(30), "the reply was never held"
        (shell,) = [c for c in held[0].reply.calls if c.name == "shell"]
        assert holds.waiting == [shell.call_id]
        if stream:  # the text before the held call was streamed through; the call itself was not
            assert client.saw_text.wait(30)
        assert not client.saw_held.is_set() and not first.done()
        decision = {"approve": op.Approve(), "edit": op.Edit(arguments=EDITED), "reject": op.Reject(reason="no listing today")}
        assert holds.decide(shell.call_id, decision[action])
        assert not holds.decide(shell.call_id, op.Approve())  # decided once
        calls = first.result(30)
        client.second()

    expected = {"approve": ("shell", ORIGINAL), "edit": ("shell", EDITED),
                "reject": (STAND_IN, {"rejected_tool": "shell", "reason": "no listing today"})}[action]
    assert [(name, args) for _, name, args in calls] == [("edit", {"path": "app.py", "text": "x = 1"}), expected]
    assert calls[1][0] == shell.call_id  # the same call, rewritten in place
    # What the model sees next: its call as it ran (or, rejected, as it asked for it) and the result.
    seen_calls, seen_results = history(protocol, r.fake.requests[1].body)
    ran = {"approve": ORIGINAL, "edit": EDITED, "reject": ORIGINAL}[action]
    assert seen_calls == [("edit", {"path": "app.py", "text": "x = 1"}), ("shell", ran)]
    assert seen_results == ["output of edit", REJECTION if action == "reject" else "output of shell"]
    # The trace records the call as the harness got it (edited) and, rejected, a result saying so.
    recorded = r.seen.of("tool_call")
    assert [(c.tool, c.arguments) for c in recorded] == [("edit", {"path": "app.py", "text": "x = 1"}), ("shell", ran)]
    assert [x.output for x in r.seen.of("tool_result")][1] == (REJECTION if action == "reject" else "output of shell")


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_reply_without_a_held_call_is_not_held(rig, stream: bool) -> None:
    holds = Holds(lambda tool: tool.startswith("browser_"),
                  on_held=lambda exchange: pytest.fail("held a reply with no held call"))
    r = rig(script(), holds=holds)
    client = AnthropicClient(r, stream)
    assert [name for _, name, _ in client.first()] == ["edit", "shell"]
    if stream:
        assert client.saw_held.is_set()
    assert holds.waiting == [] and holds.originals == {}


def test_releasing_every_hold_sends_the_original_reply(rig) -> None:
    announced = threading.Event()
    holds = Holds(lambda tool: tool in ("edit", "shell"), on_held=lambda exchange: announced.set())
    r = rig(script(), holds=holds)
    client = ChatClient(r, stream=True)
    with in_thread(holds, client.first) as first:
        assert announced.wait(30)
        assert len(holds.waiting) == 2  # both calls of the reply wait
        holds.decide(holds.waiting[0], op.Approve())
        assert not first.done() and len(holds.waiting) == 1
        holds.release_all()
        assert [name for _, name, _ in first.result(30)] == ["edit", "shell"]


@pytest.mark.parametrize("protocol", sorted(CLIENTS))
async def test_a_stream_cut_anywhere_is_held_at_the_event_that_begins_the_call(protocol: str) -> None:
    from stripebench_tui.gateway.hold import HeldStream
    from stripebench_tui.gateway.sse import SseDecoder
    from stripebench_tui.gateway.traffic import Exchange
    from stripebench_tui.gateway.wire import ANTHROPIC, OPENAI_CHAT, OPENAI_RESPONSES
    from stripebench_tui.testing import fake_stream, fake_wire

    turn = script()[0]
    wire, stream = {"anthropic": (ANTHROPIC, lambda: fake_stream.anthropic_events(fake_wire.anthropic_reply({}, turn, 1))),
                    "chat": (OPENAI_CHAT, lambda: fake_stream.openai_chat_events(fake_wire.openai_reply({}, turn, 1), True)),
                    "responses": (OPENAI_RESPONSES, lambda: fake_stream.responses_events(
                        fake_stream.responses_reply({}, turn, 1)))}[protocol]
    raw = b"".join(stream())
    holds = Holds(lambda tool: tool == "shell",
                  on_held=lambda exchange: holds.decide(exchange.reply.calls[1].call_id, op.Edit(arguments=EDITED)))
    held, parser, sent = HeldStream(wire, holds), wire.stream(), b""
    for i in range(len(raw)):  # one byte at a time: events are split at every possible place
        sent += held.feed(raw[i : i + 1])
    for event, data in SseDecoder().feed(sent):
        parser.feed(event, data)
    assert [c.name for c in parser.reply.calls] == ["edit"]  # what went through: the text and the unheld call only
    assert "ls -la" not in sent.decode()
    full = wire.stream()
    for event, data in SseDecoder().feed(raw):
        full.feed(event, data)
    exchange = Exchange(wire, {}, "", 1, reply=full.end())
    sent += await held.finish(exchange)
    again = wire.stream()
    for event, data in SseDecoder().feed(sent):
        again.feed(event, data)
    reply = again.end()
    assert reply.complete and [(c.name, c.arguments) for c in reply.calls] == [("edit", {"path": "app.py", "text": "x = 1"}),
                                                                               ("shell", EDITED)]
