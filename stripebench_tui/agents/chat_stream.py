"""A Chat Completions stream assembled into one reply: text, reasoning, refusal, tool calls, finish reason, usage.

The SDK's ``chat.completions.stream`` helper needs every tool-call delta to carry OpenAI's ``index``. Some
OpenAI-compatible servers leave it out, or give every call of a reply index 0 (Ollama), so here a delta that names a
new call id starts a new call even at an index already taken, and one without an index continues the last call.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the type only: the SDK loads with the harness that streams
    from openai.types.chat import ChatCompletionChunk


@dataclass
class ChatCall:
    """One tool call as streamed: its arguments are the JSON text the model wrote (maybe malformed)."""

    id: str = ""
    name: str = ""
    arguments: str = ""


@dataclass
class ChatReply:
    """What the chunks of one streamed reply (``ChatCompletionChunk``s, fed in order) add up to."""

    model: str = ""
    text: str = ""
    refusal: str = ""
    reasoning: str = ""
    calls: list[ChatCall] = field(default_factory=list)
    finish_reason: str | None = None  # None until the stream says why it stopped: a stream cut short has none
    usage: Any = None  # the last chunk's, when the request asked for it (stream_options.include_usage)
    _by_index: dict[int, ChatCall] = field(default_factory=dict, repr=False)

    def feed(self, chunk: ChatCompletionChunk) -> bool:
        """Add one chunk; True when it carried output (text, reasoning, a refusal or a tool call): a token."""
        self.model = chunk.model or self.model
        if getattr(chunk, "usage", None) is not None:
            self.usage = chunk.usage
        output = False
        for choice in chunk.choices or []:
            if getattr(choice, "index", 0) not in (0, None):  # one choice is asked for; ignore any other
                continue
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason
            delta = choice.delta
            if delta is None:
                continue
            extra = delta.model_extra or {}
            reasoning = extra.get("reasoning_content") or extra.get("reasoning")  # vLLM, Ollama, DeepSeek…
            if isinstance(reasoning, str) and reasoning:
                self.reasoning += reasoning
                output = True
            if delta.content:
                self.text += delta.content
                output = True
            if delta.refusal:
                self.refusal += delta.refusal
                output = True
            for part in delta.tool_calls or []:
                call = self._call_for(getattr(part, "index", None), getattr(part, "id", None) or "")
                function = getattr(part, "function", None)
                if function is not None:
                    call.name = function.name or call.name
                    call.arguments += function.arguments or ""
                output = True
        return output

    def _call_for(self, index: int | None, call_id: str) -> ChatCall:
        current = self._by_index.get(index) if index is not None else (self.calls[-1] if self.calls else None)
        if current is None or (call_id and current.id and call_id != current.id):
            current = ChatCall()
            self.calls.append(current)
            if index is not None:
                self._by_index[index] = current
        current.id = current.id or call_id
        return current


__all__ = ["ChatCall", "ChatReply"]
