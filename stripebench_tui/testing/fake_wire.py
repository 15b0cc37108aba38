"""The two wire protocols the fake model server speaks: scripted replies out, request checks in.

Replies follow the shapes the official SDKs parse (Anthropic ``Message`` with
content blocks; OpenAI ``ChatCompletion`` with ``choices[0].message.tool_calls``).
Requests are checked for the mistakes the real services reject with a 400, so an
agent that breaks the conversation rules fails here as it would in production.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ScriptedCall:
    """A tool call the fake model makes; ``raw_arguments`` (OpenAI only) sends arguments verbatim, even broken JSON."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    raw_arguments: str | None = None


@dataclass
class ScriptedTurn:
    """One reply of the fake model: text and tool calls, or final text when there are no calls."""

    text: str = ""
    tool_calls: list[ScriptedCall] = field(default_factory=list)
    reasoning: str = ""
    usage: tuple[int, int] | None = None  # (input, output) tokens; derived from sizes when None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScriptedTurn:
        """Build from the script file's JSON form."""
        calls = [ScriptedCall(c["name"], c.get("arguments") or {}, c.get("raw_arguments")) for c in data.get("tool_calls", [])]
        usage = tuple(data["usage"]) if data.get("usage") else None
        return cls(data.get("text", ""), calls, data.get("reasoning", ""), usage)


def turns_from_plan(steps: list[Any], final_text: str = "Done: the task is complete.") -> list[ScriptedTurn]:
    """One tool call per turn from a plan of (tool, arguments) pairs or {"tool", "arguments"} dicts, then a final reply."""
    turns = []
    for i, step in enumerate(steps, 1):
        tool, arguments = (step["tool"], step.get("arguments", {})) if isinstance(step, dict) else step
        turns.append(ScriptedTurn(text=f"Step {i}: {tool}.", tool_calls=[ScriptedCall(tool, dict(arguments))]))
    turns.append(ScriptedTurn(text=final_text))
    return turns


def _usage(body: dict[str, Any], turn: ScriptedTurn) -> tuple[int, int]:
    if turn.usage is not None:
        return turn.usage
    size_in = len(json.dumps(body.get("messages", []))) + len(json.dumps(body.get("system", "")))
    size_out = len(turn.text) + sum(len(c.raw_arguments or json.dumps(c.arguments)) for c in turn.tool_calls)
    return 10 + size_in // 4, 1 + size_out // 4


def anthropic_reply(body: dict[str, Any], turn: ScriptedTurn, number: int) -> dict[str, Any]:
    """A Messages API reply for ``turn`` (the ``number``-th answered request)."""
    content: list[dict[str, Any]] = []
    if turn.reasoning:
        content.append({"type": "thinking", "thinking": turn.reasoning, "signature": f"sig_fake_{number}"})
    if turn.text:
        content.append({"type": "text", "text": turn.text})
    for i, call in enumerate(turn.tool_calls):
        if call.raw_arguments is not None:
            raise ValueError("raw_arguments exist only on the OpenAI wire; Anthropic always sends a JSON object")
        content.append({"type": "tool_use", "id": f"toolu_fake_{number:02d}_{i}", "name": call.name, "input": call.arguments})
    tokens_in, tokens_out = _usage(body, turn)
    return {
        "id": f"msg_fake_{number:04d}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "fake"),
        "content": content,
        "stop_reason": "tool_use" if turn.tool_calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out},
    }


def openai_reply(body: dict[str, Any], turn: ScriptedTurn, number: int) -> dict[str, Any]:
    """A Chat Completions reply for ``turn`` (the ``number``-th answered request)."""
    calls = [
        {
            "id": f"call_fake_{number:02d}_{i}",
            "type": "function",
            "function": {"name": c.name,
                         "arguments": c.raw_arguments if c.raw_arguments is not None else json.dumps(c.arguments)},
        }
        for i, c in enumerate(turn.tool_calls)
    ]
    message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
    if calls:
        message["tool_calls"] = calls
    if turn.reasoning:
        message["reasoning_content"] = turn.reasoning  # vLLM's field for reasoning models
    tokens_in, tokens_out = _usage(body, turn)
    return {
        "id": f"chatcmpl-fake-{number:04d}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop", "logprobs": None}],
        "usage": {"prompt_tokens": tokens_in, "completion_tokens": tokens_out, "total_tokens": tokens_in + tokens_out},
    }


_ANTHROPIC_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error",
                          429: "rate_limit_error", 529: "overloaded_error"}


def anthropic_error(status: int, message: str) -> dict[str, Any]:
    """Anthropic's error body."""
    kind = _ANTHROPIC_ERROR_TYPES.get(status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": message}}


def openai_error(status: int, message: str) -> dict[str, Any]:
    """OpenAI's error body."""
    kind = "invalid_request_error" if status < 500 else "server_error"
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def _turns(messages: list[Any]) -> list[tuple[int, dict[str, Any]]]:
    """Consecutive messages of one role combined into one turn, as the Messages API does; each with its first index."""
    turns: list[tuple[int, dict[str, Any]]] = []
    for i, msg in enumerate(messages):
        if isinstance(msg, dict) and msg.get("role") == "system":
            continue  # Claude Code sends mid-conversation system messages to newer models; they take no turn
        if not isinstance(msg, dict):
            msg = {"role": None, "content": msg}
        content = msg["content"] if isinstance(msg.get("content"), list) else [{"type": "text", "text": msg.get("content")}]
        if turns and turns[-1][1].get("role") == msg.get("role") and msg.get("role") in ("user", "assistant"):
            turns[-1][1]["content"] = turns[-1][1]["content"] + content
        else:
            turns.append((i, {**msg, "content": list(content)}))
    return turns


def check_anthropic(body: dict[str, Any]) -> str | None:
    """The 400 message the Messages API would give for ``body``, or None when it is acceptable."""
    if not isinstance(body.get("model"), str) or not isinstance(body.get("max_tokens"), int):
        return "model and max_tokens are required"
    for tool in body.get("tools", []):
        if not _TOOL_NAME.match(tool.get("name", "")) or tool.get("input_schema", {}).get("type") != "object":
            return f"tools: invalid tool definition {tool.get('name')!r}"
    messages = body.get("messages")
    if not messages:
        return "messages: at least one message is required"
    expected = "user"
    owed: list[str] = []
    for i, msg in _turns(messages):
        if msg.get("role") != expected:
            return f"messages.{i}: roles must alternate, starting with user"
        content: list[dict[str, Any]] = msg["content"] if isinstance(msg.get("content"), list) else [{"type": "text",
                                                                                                      "text": msg.get("content")}]
        if not content:
            return f"messages.{i}: content must not be empty"
        if expected == "user":
            results: list[Any] = [b.get("tool_use_id") for b in content[: len(owed)] if b.get("type") == "tool_result"]
            if sorted(results) != sorted(owed):
                return f"messages.{i}: tool_use ids were found without tool_result blocks immediately after: {owed}"
            extra = [b for b in content[len(owed):] if b.get("type") == "tool_result"]
            if extra:
                return f"messages.{i}: unexpected tool_use_id {extra[0].get('tool_use_id')!r} in tool_result blocks"
            owed = []
        else:
            owed = [b["id"] for b in content if b.get("type") == "tool_use"]
        expected = "assistant" if expected == "user" else "user"
    if expected != "assistant":
        return "the last message must be a user message"
    return None


def check_openai(body: dict[str, Any]) -> str | None:
    """The 400 message a strict OpenAI-compatible server would give for ``body``, or None when acceptable."""
    if not isinstance(body.get("model"), str):
        return "model is required"
    for tool in body.get("tools", []):
        fn = tool.get("function", {})
        if tool.get("type") != "function" or not _TOOL_NAME.match(fn.get("name", "")):
            return f"tools: invalid tool definition {fn.get('name')!r}"
    messages = body.get("messages") or []
    if not messages:
        return "messages: at least one message is required"
    owed: set[str] = set()
    for i, msg in enumerate(messages):
        role = msg.get("role")
        if role == "tool":
            if msg.get("tool_call_id") not in owed:
                return f"messages.[{i}]: tool message for unknown tool_call_id {msg.get('tool_call_id')!r}"
            owed.discard(msg["tool_call_id"])
            continue
        if owed:
            return (f"messages.[{i}]: an assistant message with 'tool_calls' must be followed by tool messages "
                    f"responding to each 'tool_call_id'; missing {sorted(owed)}")
        calls = (msg.get("tool_calls") or []) if role == "assistant" else []
        for call in calls:
            try:
                json.loads(call["function"]["arguments"])  # vLLM and Ollama parse these; so do we
            except (KeyError, TypeError, json.JSONDecodeError):
                return f"messages.[{i}]: tool call {call.get('id')!r} has arguments that are not valid JSON"
            owed.add(call["id"])
    if owed:
        return f"the conversation ends with unanswered tool calls {sorted(owed)}"
    return None
