"""Rewriting tool calls in the three wire protocols: a reply (JSON or its stream events) and the history of a request.

``Change`` says what a call becomes (new arguments, and a new tool name for a
rejected call's stand-in). ``rewrite_reply`` edits a JSON reply; ``StreamRewriter``
edits stream events one by one, sending a changed call's arguments as one delta
(the deltas the upstream sent for it are dropped); ``restore`` puts the original of
a rejected call back into a request's history, with the rejection as its result,
so the model sees what it asked for and why it did not run. ``starts_call`` tells
the stream event that begins a tool call and its tool name. Nothing here does I/O.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from stripebench_tui.gateway.wire import Wire


@dataclass(frozen=True)
class Change:
    """What a held call becomes: ``arguments``, and ``name`` when the tool changes too ("" keeps it)."""

    arguments: dict[str, Any]
    name: str = ""


@dataclass(frozen=True)
class Original:
    """A rejected call as the model asked for it, and the result the model is shown for it."""

    name: str
    arguments: dict[str, Any]
    result: str


def _json(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, ensure_ascii=False)


def starts_call(wire: Wire, data: dict[str, Any]) -> str:
    """The tool name when this stream event begins a tool call, else ""."""
    if wire.family == "anthropic":
        block = data.get("content_block") or {}
        starts_a_call = data.get("type") == "content_block_start" and block.get("type") == "tool_use"
        return str(block.get("name") or "") if starts_a_call else ""
    if wire.name == "openai-chat":
        for choice in data.get("choices") or []:
            for part in (choice.get("delta") or {}).get("tool_calls") or []:
                name = (part.get("function") or {}).get("name")
                if name:
                    return str(name)
        return ""
    item = data.get("item") or {}
    starts_a_call = data.get("type") == "response.output_item.added" and item.get("type") == "function_call"
    return str(item.get("name") or "") if starts_a_call else ""


def rewrite_reply(wire: Wire, body: dict[str, Any], changes: dict[str, Change]) -> dict[str, Any]:
    """A JSON reply with the changed calls rewritten (in place; also returned)."""
    if wire.family == "anthropic":
        for block in body.get("content") or []:
            change = changes.get(str(block.get("id", ""))) if block.get("type") == "tool_use" else None
            if change is not None:
                block["input"] = change.arguments
                block["name"] = change.name or block.get("name")
    elif wire.name == "openai-chat":
        for choice in body.get("choices") or []:
            for call in (choice.get("message") or {}).get("tool_calls") or []:
                change = changes.get(str(call.get("id", "")))
                if change is not None:
                    fn = call.setdefault("function", {})
                    fn["arguments"], fn["name"] = _json(change.arguments), change.name or fn.get("name")
    else:
        _rewrite_items(body.get("output") or [], changes)
    return body


def _rewrite_items(items: list[Any], changes: dict[str, Change]) -> None:
    for item in items:
        is_call = isinstance(item, dict) and item.get("type") == "function_call"
        change = changes.get(str(item.get("call_id", ""))) if is_call else None
        if change is not None:
            item["arguments"], item["name"] = _json(change.arguments), change.name or item.get("name")


class StreamRewriter:
    """Rewrites a reply's stream events for ``changes``; ``rewrite`` returns the events to send in place of one."""

    def __init__(self, wire: Wire, changes: dict[str, Change]) -> None:
        self.wire, self.changes = wire, changes
        self._open: dict[Any, Change] = {}  # stream position (block index, call index, output index) -> change
        self._sent: set[Any] = set()  # positions whose new arguments went out

    def rewrite(self, data: dict[str, Any]) -> list[dict[str, Any]]:
        if self.wire.family == "anthropic":
            return self._anthropic(data)
        if self.wire.name == "openai-chat":
            return [self._chat(data)]
        return self._responses(data)

    def _anthropic(self, d: dict[str, Any]) -> list[dict[str, Any]]:
        kind, index = d.get("type"), d.get("index")
        if kind == "content_block_start":
            block = d.get("content_block") or {}
            change = self.changes.get(str(block.get("id", ""))) if block.get("type") == "tool_use" else None
            if change is not None:
                self._open[index] = change
                d["content_block"] = {**block, "name": change.name or block.get("name"), "input": {}}
            return [d]
        change = self._open.get(index)
        if change is None:
            return [d]
        delta = {"type": "content_block_delta", "index": index,
                 "delta": {"type": "input_json_delta", "partial_json": _json(change.arguments)}}
        if kind == "content_block_delta" and (d.get("delta") or {}).get("type") == "input_json_delta":
            if index in self._sent:
                return []
            self._sent.add(index)
            return [delta]
        if kind == "content_block_stop":
            self._open.pop(index)
            return [d] if index in self._sent else [delta, d]
        return [d]

    def _chat(self, d: dict[str, Any]) -> dict[str, Any]:
        for choice in d.get("choices") or []:
            for part in (choice.get("delta") or {}).get("tool_calls") or []:
                key = (choice.get("index", 0), part.get("index", 0))
                change = self.changes.get(str(part.get("id") or "")) or self._open.get(key)
                if change is None:
                    continue
                self._open[key] = change
                fn = part.setdefault("function", {})
                if key in self._sent:
                    fn["arguments"] = ""
                    fn.pop("name", None)
                else:
                    self._sent.add(key)
                    fn["arguments"] = _json(change.arguments)
                    if fn.get("name") and change.name:
                        fn["name"] = change.name
        return d

    def _responses(self, d: dict[str, Any]) -> list[dict[str, Any]]:
        kind, index = d.get("type"), d.get("output_index")
        item = d.get("item") if isinstance(d.get("item"), dict) else None
        if kind == "response.output_item.added" and item is not None and item.get("type") == "function_call":
            change = self.changes.get(str(item.get("call_id", "")))
            if change is not None:
                self._open[index] = change
                item["name"] = change.name or item.get("name")
            return [d]
        if kind in ("response.completed", "response.incomplete", "response.failed"):
            _rewrite_items((d.get("response") or {}).get("output") or [], self.changes)
            return [d]
        change = self._open.get(index)
        if change is None:
            return [d]
        arguments = _json(change.arguments)
        if kind == "response.function_call_arguments.delta":
            if index in self._sent:
                return []
            self._sent.add(index)
            return [{**d, "delta": arguments}]
        out = []
        if kind == "response.function_call_arguments.done":
            if index not in self._sent:
                self._sent.add(index)
                out.append({"type": "response.function_call_arguments.delta", "item_id": d.get("item_id"),
                            "output_index": index, "delta": arguments})
            d["arguments"] = arguments
        elif kind == "response.output_item.done" and item is not None:
            item["arguments"], item["name"] = arguments, change.name or item.get("name")
        return out + [d]


def encode(events: Iterator[tuple[str, dict[str, Any] | str]]) -> bytes:
    """Server-sent events back to bytes (``event:`` only when named; a str payload, like ``[DONE]``, as is)."""
    out = []
    for name, data in events:
        head = f"event: {name}\n".encode() if name else b""
        body = data.encode() if isinstance(data, str) else orjson.dumps(data)
        out.append(head + b"data: " + body + b"\n\n")
    return b"".join(out)


def restore(wire: Wire, body: dict[str, Any], originals: dict[str, Original]) -> dict[str, Any]:
    """``body`` (a new copy when anything changed) with each rejected call and its result as the model should see them."""
    if not originals:
        return body
    raw = orjson.dumps(body)
    if not any(call_id.encode() in raw for call_id in originals):
        return body
    body = orjson.loads(raw)
    if wire.family == "anthropic":
        for message in body.get("messages") or []:
            for block in message.get("content") if isinstance(message.get("content"), list) else []:
                kind = block.get("type") if isinstance(block, dict) else None
                if kind == "tool_use" and block.get("id") in originals:
                    original = originals[block["id"]]
                    block["name"], block["input"] = original.name, original.arguments
                elif kind == "tool_result" and block.get("tool_use_id") in originals:
                    block["content"], block["is_error"] = originals[block["tool_use_id"]].result, True
    elif wire.name == "openai-chat":
        for message in body.get("messages") or []:
            for call in message.get("tool_calls") or [] if isinstance(message, dict) else []:
                if call.get("id") in originals:
                    original = originals[call["id"]]
                    call["function"] = {**(call.get("function") or {}), "name": original.name,
                                        "arguments": _json(original.arguments)}
            if isinstance(message, dict) and message.get("role") == "tool" and message.get("tool_call_id") in originals:
                message["content"] = originals[message["tool_call_id"]].result
    elif isinstance(body.get("input"), list):
        for item in body["input"]:
            call_id = item.get("call_id") if isinstance(item, dict) else None
            if call_id not in originals:
                continue
            if item.get("type") == "function_call":
                item["name"], item["arguments"] = originals[call_id].name, _json(originals[call_id].arguments)
            elif item.get("type") == "function_call_output":
                item["output"] = originals[call_id].result
    return body


__all__ = ["Change", "Original", "StreamRewriter", "encode", "restore", "rewrite_reply", "starts_call"]
