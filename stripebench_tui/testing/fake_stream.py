"""Streaming (SSE) and Responses-API forms of the fake model's scripted replies.

``fake_wire`` builds the non-streaming replies; this module turns them into the
server-sent events each provider streams (Anthropic Messages, OpenAI Chat
Completions, OpenAI Responses) and builds Responses-API replies. Text and tool
arguments are split into a few deltas so that clients really have to assemble
them, as they do against the real services.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

from stripebench_tui.testing.fake_wire import ScriptedCall, ScriptedTurn, _usage

DONE = b"data: [DONE]\n\n"


def _pieces(text: str, parts: int = 3) -> list[str]:
    """``text`` cut into up to ``parts`` non-empty pieces (one piece for short text)."""
    if len(text) < parts * 2:
        return [text] if text else []
    size = -(-len(text) // parts)
    return [text[i : i + size] for i in range(0, len(text), size)]


def sse(event: str | None, data: dict[str, Any]) -> bytes:
    """One server-sent event (``event:`` line only when named)."""
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def anthropic_events(reply: dict[str, Any]) -> Iterator[bytes]:
    """The Messages API stream for a complete ``reply`` (as ``fake_wire.anthropic_reply`` builds it)."""
    start = {**reply, "content": [], "stop_reason": None, "stop_sequence": None,
             "usage": {"input_tokens": reply["usage"]["input_tokens"], "output_tokens": 1}}
    yield sse("message_start", {"type": "message_start", "message": start})
    for index, block in enumerate(reply["content"]):
        kind = block["type"]
        first: dict[str, Any]
        if kind == "text":
            first, deltas = {"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in _pieces(block["text"])]
        elif kind == "thinking":
            first = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [{"type": "thinking_delta", "thinking": p} for p in _pieces(block["thinking"])]
            deltas.append({"type": "signature_delta", "signature": block.get("signature", "")})
        else:  # tool_use
            first = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in _pieces(json.dumps(block["input"]))]
        yield sse("content_block_start", {"type": "content_block_start", "index": index, "content_block": first})
        for delta in deltas:
            yield sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
        yield sse("content_block_stop", {"type": "content_block_stop", "index": index})
    yield sse("message_delta", {"type": "message_delta",
                                "delta": {"stop_reason": reply["stop_reason"], "stop_sequence": None},
                                "usage": {"output_tokens": reply["usage"]["output_tokens"]}})
    yield sse("message_stop", {"type": "message_stop"})


def openai_chat_events(reply: dict[str, Any], include_usage: bool) -> Iterator[bytes]:
    """The Chat Completions stream for a complete ``reply`` (``fake_wire.openai_reply``), ending with ``[DONE]``."""
    base = {"id": reply["id"], "object": "chat.completion.chunk", "created": reply["created"], "model": reply["model"]}
    message = reply["choices"][0]["message"]

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return sse(None, {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]})

    yield chunk({"role": "assistant", "content": ""})
    for piece in _pieces(message.get("reasoning_content") or ""):
        yield chunk({"reasoning_content": piece})
    for piece in _pieces(message.get("content") or ""):
        yield chunk({"content": piece})
    for i, call in enumerate(message.get("tool_calls") or []):
        yield chunk({"tool_calls": [{"index": i, "id": call["id"], "type": "function",
                                     "function": {"name": call["function"]["name"], "arguments": ""}}]})
        for piece in _pieces(call["function"]["arguments"]):
            yield chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]})
    yield chunk({}, reply["choices"][0]["finish_reason"])
    if include_usage:
        yield sse(None, {**base, "choices": [], "usage": reply["usage"]})
    yield DONE


def _offered(body: dict[str, Any]) -> dict[str, tuple[str, str, str]]:
    """Tools the request offers, by the name a script uses: ``name``, or ``namespace__name`` for a namespaced one
    (Codex's MCP tools), each as (namespace, name, type). Codex may also list tools in an ``additional_tools`` item."""
    found: dict[str, tuple[str, str, str]] = {}
    listed = list(body.get("tools") or [])
    for item in given if isinstance(given := body.get("input"), list) else []:
        if isinstance(item, dict) and item.get("type") == "additional_tools":
            listed += item.get("tools") or []
    for tool in listed:
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "namespace":
            for inner in tool.get("tools") or []:
                # the "functions" namespace holds top-level tools: they are called without a namespace
                space = "" if tool.get("name") == "functions" else str(tool.get("name", ""))
                key = f"{space}__{inner.get('name')}" if space else str(inner.get("name"))
                found[key] = (space, str(inner.get("name")), str(inner.get("type", "function")))
        elif tool.get("name"):
            found[str(tool["name"])] = ("", str(tool["name"]), str(tool.get("type", "function")))
    return found


def _responses_call(call: ScriptedCall, offered: dict[str, tuple[str, str, str]], number: int, i: int) -> dict[str, Any]:
    """The output item of a scripted call: a ``function_call``, with ``namespace`` when the offered tool has one, or a
    ``custom_tool_call`` (free-form ``input``: the call's ``raw_arguments`` or its ``input`` argument) for a custom tool."""
    space, name, kind = offered.get(call.name, ("", call.name, "function"))
    ids = {"id": f"fc_fake_{number:02d}_{i}", "call_id": f"call_fake_{number:02d}_{i}", "name": name, "status": "completed"}
    if space:
        ids["namespace"] = space
    if kind == "custom":
        text = call.raw_arguments if call.raw_arguments is not None else str(call.arguments.get("input", ""))
        return {"type": "custom_tool_call", **ids, "input": text}
    arguments = call.raw_arguments if call.raw_arguments is not None else json.dumps(call.arguments)
    return {"type": "function_call", **ids, "arguments": arguments}


def responses_reply(body: dict[str, Any], turn: ScriptedTurn, number: int) -> dict[str, Any]:
    """A Responses API reply for ``turn`` (the ``number``-th answered request)."""
    output: list[dict[str, Any]] = []
    if turn.reasoning:
        output.append({"type": "reasoning", "id": f"rs_fake_{number:04d}",
                       "summary": [{"type": "summary_text", "text": turn.reasoning}]})
    if turn.text:
        output.append({"type": "message", "id": f"msg_fake_{number:04d}", "status": "completed", "role": "assistant",
                       "content": [{"type": "output_text", "text": turn.text, "annotations": []}]})
    offered = _offered(body)
    output += [_responses_call(call, offered, number, i) for i, call in enumerate(turn.tool_calls)]
    sized = {"messages": body.get("input", ""), "system": body.get("instructions", "")}
    tokens_in, tokens_out = _usage(sized, turn)
    return {
        "id": f"resp_fake_{number:04d}", "object": "response", "created_at": int(time.time()), "status": "completed",
        "model": body.get("model", "fake"), "output": output, "parallel_tool_calls": True, "tool_choice": "auto",
        "tools": body.get("tools", []), "error": None, "incomplete_details": None, "instructions": body.get("instructions"),
        "metadata": {}, "temperature": None, "top_p": None,
        "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out, "total_tokens": tokens_in + tokens_out,
                  "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}},
    }


def responses_events(reply: dict[str, Any]) -> Iterator[bytes]:
    """The Responses API stream for a complete ``reply`` (``responses_reply``)."""
    seq = 0

    def event(kind: str, data: dict[str, Any]) -> bytes:
        nonlocal seq
        seq += 1
        return sse(kind, {"type": kind, "sequence_number": seq - 1, **data})

    yield event("response.created", {"response": {**reply, "status": "in_progress", "output": [], "usage": None}})
    for index, item in enumerate(reply["output"]):
        kind = item["type"]
        if kind == "message":
            yield event("response.output_item.added",
                        {"output_index": index, "item": {**item, "content": [], "status": "in_progress"}})
            for piece in _pieces(item["content"][0]["text"]):
                yield event("response.output_text.delta", {"item_id": item["id"], "output_index": index, "content_index": 0,
                                                           "delta": piece, "logprobs": []})
        elif kind == "function_call":
            yield event("response.output_item.added",
                        {"output_index": index, "item": {**item, "arguments": "", "status": "in_progress"}})
            for piece in _pieces(item["arguments"]):
                yield event("response.function_call_arguments.delta",
                            {"item_id": item["id"], "output_index": index, "delta": piece})
        elif kind == "custom_tool_call":
            yield event("response.output_item.added",
                        {"output_index": index, "item": {**item, "input": "", "status": "in_progress"}})
            for piece in _pieces(item["input"]):
                yield event("response.custom_tool_call_input.delta",
                            {"item_id": item["id"], "output_index": index, "delta": piece})
        else:  # reasoning
            yield event("response.output_item.added", {"output_index": index, "item": {**item, "summary": []}})
            for piece in _pieces(item["summary"][0]["text"]):
                yield event("response.reasoning_summary_text.delta", {"item_id": item["id"], "output_index": index,
                                                                      "summary_index": 0, "delta": piece})
        yield event("response.output_item.done", {"output_index": index, "item": item})
    yield event("response.completed", {"response": reply})


def responses_error(status: int, message: str) -> dict[str, Any]:
    """The Responses API's error body (the same shape as Chat Completions')."""
    kind = "invalid_request_error" if status < 500 else "server_error"
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def check_responses(body: dict[str, Any]) -> str | None:
    """The 400 message the Responses API would give for ``body``, or None when acceptable."""
    if not isinstance(body.get("model"), str):
        return "model is required"
    if not isinstance(body.get("input"), (str, list)):
        return "input must be a string or a list of items"
    for tool in body.get("tools", []):
        if tool.get("type") == "function" and not tool.get("name"):
            return "tools: a function tool needs a name"
    return None


def carries_token(event: bytes) -> bool:
    """Whether one streamed event (as the functions above make them, any protocol) carries output: a text, thinking,
    tool-input or reasoning delta, or a Chat Completions chunk with content, reasoning or a tool call."""
    for line in event.decode().splitlines():
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        data = json.loads(line.removeprefix("data: "))
        kind = str(data.get("type", ""))
        if kind == "content_block_delta":
            return data["delta"].get("type") != "signature_delta"
        if kind.startswith("response.") and kind.endswith(".delta"):
            return True
        for choice in data.get("choices") or []:
            delta = choice.get("delta") or {}
            if delta.get("content") or delta.get("reasoning_content") or delta.get("tool_calls"):
                return True
    return False


def stream_error(protocol: str, message: str) -> bytes:
    """The error event a provider sends inside a stream that had begun well (an overloaded or failing server)."""
    if protocol == "anthropic":
        return sse("error", {"type": "error", "error": {"type": "overloaded_error", "message": message}})
    if protocol == "responses":
        return sse("error", {"type": "error", "code": "server_error", "message": message, "param": None,
                             "sequence_number": 0})
    return sse(None, {"error": {"message": message, "type": "server_error", "param": None, "code": None}})


def tool_index_as(events: Iterator[bytes], style: str) -> Iterator[bytes]:
    """Chat Completions ``events`` with the tool-call ``index`` of some OpenAI-compatible servers: "missing" (left out)
    or "reused" (0 for every call, as Ollama streams them); "openai" leaves them as OpenAI sends them."""
    for event in events:
        if style == "openai" or b'"tool_calls"' not in event:
            yield event
            continue
        data = json.loads(event.decode().removeprefix("data: "))
        for choice in data["choices"]:
            for part in choice["delta"].get("tool_calls") or []:
                if style == "missing":
                    del part["index"]
                else:
                    part["index"] = 0
        yield sse(None, data)
