"""The three model-API wire protocols the gateway understands, reduced to what the trace needs.

Each protocol reads a request body into the user-side items it carries (tool
results by call id, user text), reads a reply (a JSON body, or its stream of
server-sent events fed one by one) into a ``Reply``, and appends an operator's
note to a request as a user message in its own format. Nothing here does I/O.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, cast

import orjson

from stripebench_tui.core.json_value import JSONValue


@dataclass
class Call:
    """A tool call the model asked for."""

    call_id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass
class Reply:
    """One model response, assembled from JSON or from its stream."""

    text: str = ""
    reasoning: str = ""
    calls: list[Call] = field(default_factory=list)
    model: str = ""
    tokens_in: int | None = None
    tokens_out: int | None = None
    cache_write: int = 0
    cache_read: int = 0
    stop_reason: str = ""
    complete: bool = False  # the response ended normally (a cut-off stream leaves this False)
    error: str = ""


@dataclass
class Incoming:
    """A user-side item of a request: a tool result (``call_id`` set) or user text. ``key`` identifies it across requests."""

    key: str
    text: str
    call_id: str = ""
    is_error: bool = False


def _digest(text: str) -> str:
    """A cheap in-memory identity for a text (keys live only as long as the gateway)."""
    return f"{len(text)}:{hash(text):x}"


def _loads(data: str) -> Any:
    """Parse one JSON document (orjson: streams are parsed event by event on the relay path)."""
    return orjson.loads(data)


def _arguments(raw: JSONValue) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str) or not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return {"raw_arguments": raw}
    return value if isinstance(value, dict) else {"raw_arguments": raw}


def _content_text(content: JSONValue) -> str:
    """Text of a content field: a string, or a list of text/image parts of any provider."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return "" if content is None else json.dumps(content)
    parts = []
    for part in content:
        if isinstance(part, str):
            parts.append(part)
        elif isinstance(part, dict):
            if isinstance(text := part.get("text"), str):
                parts.append(text)
            elif part.get("type") in ("image", "image_url", "input_image"):
                parts.append("[image]")
    return "\n".join(parts)


class Wire:
    """Base of the protocols; ``name`` also names the family whose upstream it uses."""

    name = ""
    family = ""  # "anthropic" | "openai"

    def incoming(self, body: dict[str, Any]) -> list[Incoming]:
        raise NotImplementedError

    def reply(self, body: dict[str, Any]) -> Reply:
        raise NotImplementedError

    def stream(self) -> StreamParser:
        raise NotImplementedError

    def append_user(self, body: dict[str, Any], text: str) -> dict[str, Any]:
        raise NotImplementedError

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        kind = "invalid_request_error" if status < 500 else "server_error"
        if status == 401:
            kind = "authentication_error"
        return {"error": {"message": message, "type": kind, "param": None, "code": None}}


class StreamParser:
    """Assembles a ``Reply`` from stream events; ``feed`` says whether the event carried model output."""

    def __init__(self) -> None:
        self.reply = Reply()

    def feed(self, event: str, data: str) -> bool:
        raise NotImplementedError

    def end(self) -> Reply:
        """The reply as far as it came (also when the stream was cut off)."""
        return self.reply


# ---- Anthropic Messages ----


class Anthropic(Wire):
    name = family = "anthropic"

    def incoming(self, body: dict[str, Any]) -> list[Incoming]:
        out: list[Incoming] = []
        for i, message in enumerate(body.get("messages") or []):
            if not isinstance(message, dict) or message.get("role") != "user":
                continue
            content = message.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
            for j, block in enumerate(blocks):
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_result":
                    call_id = str(block.get("tool_use_id", ""))
                    out.append(Incoming("r:" + call_id, _content_text(block.get("content")), call_id,
                                        bool(block.get("is_error"))))
                elif block.get("type") == "text" and isinstance(block.get("text"), str):
                    out.append(Incoming(f"u:{i}:{j}:" + _digest(block["text"]), block["text"]))
        return out

    def reply(self, body: dict[str, Any]) -> Reply:
        reply = Reply(model=str(body.get("model") or ""), stop_reason=str(body.get("stop_reason") or ""), complete=True)
        texts, thoughts = [], []
        for block in body.get("content") or []:
            kind = block.get("type")
            if kind == "text":
                texts.append(block.get("text", ""))
            elif kind == "thinking":
                thoughts.append(block.get("thinking", ""))
            elif kind in ("tool_use", "server_tool_use"):
                reply.calls.append(Call(str(block.get("id", "")), str(block.get("name", "")), _arguments(block.get("input"))))
        reply.text, reply.reasoning = "\n\n".join(texts), "\n\n".join(thoughts)
        _anthropic_usage(reply, body.get("usage") or {})
        return reply

    def stream(self) -> StreamParser:
        return _AnthropicStream()

    def append_user(self, body: dict[str, Any], text: str) -> dict[str, Any]:
        messages = list(body.get("messages") or [])
        block = {"type": "text", "text": text}
        if messages and messages[-1].get("role") == "user":
            last = dict(messages[-1])
            content = last.get("content")
            last["content"] = ([{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])) + [block]
            messages[-1] = last
        else:
            messages.append({"role": "user", "content": [block]})
        return {**body, "messages": messages}

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        kinds = {400: "invalid_request_error", 401: "authentication_error", 429: "rate_limit_error", 529: "overloaded_error"}
        return {"type": "error", "error": {"type": kinds.get(status, "api_error"), "message": message}}


def _anthropic_usage(reply: Reply, usage: dict[str, Any]) -> None:
    if "input_tokens" in usage or "cache_read_input_tokens" in usage:
        reply.cache_write = int(usage.get("cache_creation_input_tokens") or 0)
        reply.cache_read = int(usage.get("cache_read_input_tokens") or 0)
        reply.tokens_in = int(usage.get("input_tokens") or 0) + reply.cache_write + reply.cache_read
    if "output_tokens" in usage:
        reply.tokens_out = int(usage.get("output_tokens") or 0)


class _AnthropicStream(StreamParser):
    def __init__(self) -> None:
        super().__init__()
        self._blocks: dict[int, dict[str, Any]] = {}
        self._texts: list[str] = []
        self._thoughts: list[str] = []

    def feed(self, event: str, data: str) -> bool:
        try:
            d = _loads(data)
        except orjson.JSONDecodeError:
            return False
        kind, r = d.get("type", event), self.reply
        if kind == "message_start":
            message = d.get("message") or {}
            r.model = str(message.get("model") or "")
            _anthropic_usage(r, message.get("usage") or {})
        elif kind == "content_block_start":
            block = dict(d.get("content_block") or {})
            block["_json"] = ""
            self._blocks[int(d.get("index", len(self._blocks)))] = block
            return bool(block.get("text") or block.get("thinking"))
        elif kind == "content_block_delta":
            block = self._blocks.setdefault(int(d.get("index", 0)), {"type": "text", "text": "", "_json": ""})
            delta = d.get("delta") or {}
            dkind = delta.get("type")
            if dkind == "text_delta":
                block["text"] = block.get("text", "") + delta.get("text", "")
            elif dkind == "thinking_delta":
                block["thinking"] = block.get("thinking", "") + delta.get("thinking", "")
            elif dkind == "input_json_delta":
                block["_json"] += delta.get("partial_json", "")
            else:
                return False
            return True
        elif kind == "content_block_stop":
            self._finish(int(d.get("index", 0)))
        elif kind == "message_delta":
            r.stop_reason = str((d.get("delta") or {}).get("stop_reason") or r.stop_reason)
            _anthropic_usage(r, d.get("usage") or {})
        elif kind == "message_stop":
            for index in sorted(self._blocks):
                self._finish(index)
            r.complete = True
        elif kind == "error":
            r.error = str((d.get("error") or {}).get("message") or data)
        return False

    def end(self) -> Reply:
        for index in sorted(self._blocks):
            self._finish(index)
        return self.reply

    def _finish(self, index: int) -> None:
        block = self._blocks.pop(index, None)
        if block is None:
            return
        kind = block.get("type")
        if kind == "text":
            self.reply.text = "\n\n".join(filter(None, [self.reply.text, block.get("text", "")]))
        elif kind == "thinking":
            self.reply.reasoning = "\n\n".join(filter(None, [self.reply.reasoning, block.get("thinking", "")]))
        elif kind in ("tool_use", "server_tool_use"):
            raw = block["_json"] or block.get("input") or {}
            self.reply.calls.append(Call(str(block.get("id", "")), str(block.get("name", "")), _arguments(raw)))


# ---- OpenAI Chat Completions ----


class OpenAIChat(Wire):
    name, family = "openai-chat", "openai"

    def incoming(self, body: dict[str, Any]) -> list[Incoming]:
        out: list[Incoming] = []
        for i, message in enumerate(body.get("messages") or []):
            if not isinstance(message, dict):
                continue
            role = message.get("role")
            if role == "tool":
                call_id = str(message.get("tool_call_id", ""))
                out.append(Incoming("r:" + call_id, _content_text(message.get("content")), call_id))
            elif role == "user":
                text = _content_text(message.get("content"))
                out.append(Incoming(f"u:{i}:" + _digest(text), text))
        return out

    def reply(self, body: dict[str, Any]) -> Reply:
        reply = Reply(model=str(body.get("model") or ""), complete=True)
        choices = body.get("choices") or []
        if choices:
            message = choices[0].get("message") or {}
            reply.stop_reason = str(choices[0].get("finish_reason") or "")
            reply.text = message.get("content") or message.get("refusal") or ""
            reasoning = message.get("reasoning_content") or message.get("reasoning") or ""
            reply.reasoning = reasoning if isinstance(reasoning, str) else ""
            for call in message.get("tool_calls") or []:
                fn = call.get("function") or {}
                reply.calls.append(Call(str(call.get("id", "")), str(fn.get("name", "")), _arguments(fn.get("arguments"))))
        _openai_usage(reply, body.get("usage"))
        return reply

    def stream(self) -> StreamParser:
        return _ChatStream()

    def append_user(self, body: dict[str, Any], text: str) -> dict[str, Any]:
        return {**body, "messages": [*(body.get("messages") or []), {"role": "user", "content": text}]}


def _openai_usage(reply: Reply, usage: JSONValue) -> None:
    if isinstance(usage, dict):
        reply.tokens_in = cast("int | None", usage.get("prompt_tokens", usage.get("input_tokens")))
        reply.tokens_out = cast("int | None", usage.get("completion_tokens", usage.get("output_tokens")))


class _ChatStream(StreamParser):
    def __init__(self) -> None:
        super().__init__()
        self._calls: dict[int, dict[str, str]] = {}

    def feed(self, event: str, data: str) -> bool:
        r = self.reply
        if data.strip() == "[DONE]":
            r.calls = [Call(c["id"], c["name"], _arguments(c["arguments"])) for _, c in sorted(self._calls.items())]
            r.complete = True
            return False
        try:
            d = _loads(data)
        except orjson.JSONDecodeError:
            return False
        if isinstance(d.get("error"), dict):
            r.error = str(d["error"].get("message") or data)
            return False
        r.model = str(d.get("model") or r.model)
        _openai_usage(r, d.get("usage"))
        token = False
        for choice in d.get("choices") or []:
            delta = choice.get("delta") or {}
            if choice.get("finish_reason"):
                r.stop_reason = str(choice["finish_reason"])
            if delta.get("content"):
                r.text += delta["content"]
                token = True
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(reasoning, str) and reasoning:
                r.reasoning += reasoning
                token = True
            for part in delta.get("tool_calls") or []:
                call = self._calls.setdefault(int(part.get("index", 0)), {"id": "", "name": "", "arguments": ""})
                fn = part.get("function") or {}
                call["id"] = part.get("id") or call["id"]
                call["name"] = fn.get("name") or call["name"]
                call["arguments"] += fn.get("arguments") or ""
                token = True
        # Calls so far, so a cut-off stream still shows what was asked for.
        r.calls = [Call(c["id"], c["name"], _arguments(c["arguments"])) for _, c in sorted(self._calls.items())]
        return token


# ---- OpenAI Responses ----


class OpenAIResponses(Wire):
    name, family = "openai-responses", "openai"

    def incoming(self, body: dict[str, Any]) -> list[Incoming]:
        items = body.get("input")
        if isinstance(items, str):
            return [Incoming("u:0:" + _digest(items), items)]
        out: list[Incoming] = []
        for i, item in enumerate(items or []):
            if not isinstance(item, dict):
                continue
            kind = item.get("type", "message")
            if kind in ("function_call_output", "custom_tool_call_output"):
                call_id = str(item.get("call_id", ""))
                out.append(Incoming("r:" + call_id, _content_text(item.get("output")), call_id))
            elif kind == "message" and item.get("role") == "user":
                text = _content_text(item.get("content"))
                out.append(Incoming(f"u:{i}:" + _digest(text), text))
        return out

    def reply(self, body: dict[str, Any]) -> Reply:
        reply = Reply(model=str(body.get("model") or ""), stop_reason=str(body.get("status") or ""),
                      complete=body.get("status") in ("completed", "incomplete"))
        texts, thoughts = [], []
        for item in body.get("output") or []:
            kind = item.get("type")
            if kind == "message":
                texts.append(_content_text(item.get("content")))
            elif kind == "reasoning":
                thoughts.append(_content_text(item.get("summary") or item.get("content")))
            elif kind in ("function_call", "custom_tool_call"):
                reply.calls.append(_responses_call(item))
        reply.text, reply.reasoning = "\n\n".join(t for t in texts if t), "\n\n".join(t for t in thoughts if t)
        if reply.calls and reply.stop_reason == "completed":
            reply.stop_reason = "tool_calls"
        _openai_usage(reply, body.get("usage"))
        if isinstance(body.get("error"), dict):
            reply.error = str(body["error"].get("message") or "")
        return reply

    def stream(self) -> StreamParser:
        return _ResponsesStream(self)

    def append_user(self, body: dict[str, Any], text: str) -> dict[str, Any]:
        items = body.get("input")
        listed = [{"type": "message", "role": "user", "content": items}] if isinstance(items, str) else list(items or [])
        return {**body, "input": [*listed, {"type": "message", "role": "user", "content": text}]}


def _responses_name(item: dict[str, Any]) -> str:
    """A call's tool name; a namespaced tool (Codex puts each MCP server's tools in one) as ``namespace__name``."""
    name, namespace = str(item.get("name", "")), item.get("namespace")
    return f"{namespace}__{name}" if isinstance(namespace, str) and namespace else name


def _responses_call(item: dict[str, Any]) -> Call:
    """A ``function_call`` item, or a ``custom_tool_call`` (free-form input, kept as ``{"input": …}``)."""
    if item.get("type") == "custom_tool_call":
        return Call(str(item.get("call_id", "")), _responses_name(item), {"input": str(item.get("input") or "")})
    return Call(str(item.get("call_id", "")), _responses_name(item), _arguments(item.get("arguments")))


class _ResponsesStream(StreamParser):
    def __init__(self, wire: OpenAIResponses) -> None:
        super().__init__()
        self._wire = wire
        self._calls: dict[int, dict[str, str]] = {}

    def feed(self, event: str, data: str) -> bool:
        try:
            d = _loads(data)
        except orjson.JSONDecodeError:
            return False
        kind, r = d.get("type", event), self.reply
        if kind in ("response.created", "response.in_progress"):
            r.model = str((d.get("response") or {}).get("model") or r.model)
        elif kind == "response.output_text.delta":
            r.text += d.get("delta", "")
            return True
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            r.reasoning += d.get("delta", "")
            return True
        elif kind == "response.output_item.added" and (d.get("item") or {}).get("type") in ("function_call", "custom_tool_call"):
            item = d["item"]
            self._calls[int(d.get("output_index", 0))] = {**item, "arguments": str(item.get("arguments") or ""),
                                                         "input": str(item.get("input") or "")}
            self._sync()
            return True
        elif kind in ("response.function_call_arguments.delta", "response.custom_tool_call_input.delta"):
            call = self._calls.setdefault(int(d.get("output_index", 0)), {"type": "function_call", "arguments": "", "input": ""})
            call["arguments" if kind.startswith("response.function") else "input"] += d.get("delta", "")
            self._sync()
            return True
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            final = self._wire.reply(d.get("response") or {})
            final.complete = kind != "response.failed"
            self.reply = final
        elif kind == "error":
            r.error = str(d.get("message") or data)
        return False

    def _sync(self) -> None:
        self.reply.calls = [_responses_call(c) for _, c in sorted(self._calls.items())]


ANTHROPIC, OPENAI_CHAT, OPENAI_RESPONSES = Anthropic(), OpenAIChat(), OpenAIResponses()

__all__ = ["ANTHROPIC", "Call", "Incoming", "OPENAI_CHAT", "OPENAI_RESPONSES", "Reply", "StreamParser", "Wire"]
