"""Gateway exchanges as trace events: a tap that turns what it sees into core events.

Per exchange: the new tool results of the request (``tool_result``, in the turn of
the call they answer, timed from the response that asked for them), new user text
(``model_message`` with role ``user``), then, when the response ended, the model's
turn (``model_message`` with text, reasoning, tokens, cost, time to first token and
total latency) and one ``tool_call`` per call. A failed or cut-off response is
reported as a ``service`` log line of the gateway, after whatever it did carry.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from stripebench_tui.agents.pricing import TurnUsage, turn_cost
from stripebench_tui.core.events import Event, ModelMessage, Service, ToolCall, ToolResult
from stripebench_tui.gateway.traffic import Exchange, ObservedResult
from stripebench_tui.gateway.wire import Reply

# Receives each event and the turn it belongs to.
Emit = Callable[[Event, int], None]

SERVICE = "gateway"


def reply_message(reply: Reply, exchange: Exchange) -> ModelMessage:
    """The assistant's ``model_message`` for a reply."""
    cost = turn_cost(reply.model, TurnUsage(reply.tokens_in, reply.tokens_out, reply.cache_write, reply.cache_read),
                     provider=exchange.wire.family)
    return ModelMessage(role="assistant", text=reply.text, reasoning=reply.reasoning, model=reply.model,
                        tokens_in=reply.tokens_in, tokens_out=reply.tokens_out, cost_usd=cost,
                        ttft=None if exchange.ttft is None else round(exchange.ttft, 6),
                        latency=None if exchange.latency is None else round(exchange.latency, 6))


def result_event(result: ObservedResult) -> ToolResult:
    return ToolResult(call_id=result.call_id, tool=result.tool, output=result.output, is_error=result.is_error,
                      duration=round(result.duration, 6))


def failure_line(exchange: Exchange) -> str:
    """The gateway's log line for an exchange without a complete reply."""
    retry = f" (retry-after {exchange.retry_after})" if exchange.retry_after else ""
    hint = ""
    if exchange.status in (401, 403):
        hint = "; check the provider key given to the gateway (ANTHROPIC_API_KEY / OPENAI_API_KEY)"
    via = f" from {exchange.upstream}" if exchange.upstream and exchange.upstream not in exchange.error else ""
    return f"{exchange.wire.name} request {exchange.number}{via}: {exchange.error}{retry}{hint}"


class EventTap:
    """A tap that emits events (see the module docstring); thread-safe, it keeps its own turn count."""

    def __init__(self, emit: Emit) -> None:
        self.emit = emit
        self.turn = 0
        self._turn_of: dict[str, int] = {}
        self._lock = threading.Lock()

    async def before(self, exchange: Exchange) -> None:
        with self._lock:
            for result in exchange.results:
                self.emit(result_event(result), self._turn_of.pop(result.call_id, self.turn))
            for text in exchange.texts:
                self.emit(ModelMessage(role="user", text=text), self.turn)

    def after(self, exchange: Exchange) -> None:
        with self._lock:
            reply = exchange.reply
            if reply is not None and (reply.complete or reply.text or reply.reasoning or reply.calls):
                self.turn += 1
                self.emit(reply_message(reply, exchange), self.turn)
                for call in reply.calls if reply.complete else []:
                    self._turn_of[call.call_id] = self.turn
                    self.emit(ToolCall(call_id=call.call_id, tool=call.name, arguments=call.arguments), self.turn)
            if exchange.error:
                self.emit(Service(service=SERVICE, status="log", stream="stderr", text=failure_line(exchange)), self.turn)


__all__ = ["EventTap", "SERVICE", "failure_line", "reply_message", "result_event"]
