"""A recorded episode's turns as an agent saw and answered them, for an agent that continues a fork natively.

``recorded_exchanges(events, at_turn)`` reads the events of turns 1..N (a trace's, in order) into the agent's side of
the conversation: for each agent turn, the observations it was given before it (tool results of the previous turn's
calls, calls the operator rejected, the operator's messages and tool runs) and its answer (text, reasoning, tool
calls with their recorded ids); plus the observations still owed after turn N (turn N's results), which the agent
hands in with its first live request. The LLM agents replay these through their own message builders
(``LlmAgent.continue_from``), so the first request after a fork is the request the recorded run would have sent.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from stripebench_tui.core.agent import Observation, ToolRequest
from stripebench_tui.core.events import AGENT, OPERATOR, Event, ModelMessage, Operator, ToolCall, ToolResult
from stripebench_tui.core.operator import rejection_text

REJECT = "reject"  # the operator action that refuses a pending call (core.operator's Reject)


@dataclass
class AgentExchange:
    """One recorded agent turn: what it was shown first, and what it answered."""

    turn: int
    observations: list[Observation] = field(default_factory=list)
    text: str = ""
    reasoning: str = ""
    calls: list[ToolRequest] = field(default_factory=list)


def recorded_exchanges(events: Iterable[Event], at_turn: int) -> tuple[list[AgentExchange], list[Observation]]:
    """The agent turns of 1..``at_turn`` and the observations owed after the last (see the module docstring)."""
    exchanges: list[AgentExchange] = []
    owed: list[Observation] = []
    current: AgentExchange | None = None
    operator_calls: dict[str, ToolCall] = {}
    for ev in events:
        if ev.turn < 1 or ev.turn > at_turn:
            continue
        if current is not None and ev.turn != current.turn:
            current = None
        if isinstance(ev, ModelMessage) and ev.role == "assistant":
            current = _open(exchanges, owed, ev.turn, current)
            owed = []
            current.text, current.reasoning = ev.text, ev.reasoning
        elif isinstance(ev, ToolCall) and ev.actor == AGENT:
            if current is None or current.turn != ev.turn:
                current = _open(exchanges, owed, ev.turn, current)
                owed = []
            current.calls.append(ToolRequest(ev.call_id, ev.tool, dict(ev.arguments)))
        elif isinstance(ev, ToolCall) and ev.actor == OPERATOR:
            operator_calls[ev.call_id] = ev
        elif isinstance(ev, ToolResult):
            if ev.call_id in operator_calls:
                call = operator_calls.pop(ev.call_id)
                args = json.dumps(call.arguments, ensure_ascii=False, sort_keys=True)
                failed = " (failed)" if ev.is_error else ""
                owed.append(Observation(kind="operator_message", tool=call.tool, is_error=ev.is_error,
                                        text=f"The operator ran the tool {call.tool} {args}{failed}; it returned:\n"
                                             f"{ev.output}"))
            else:
                owed.append(Observation(kind="tool_result", text=ev.output, call_id=ev.call_id, tool=ev.tool,
                                        is_error=ev.is_error))
        elif isinstance(ev, Operator) and ev.action == REJECT and ev.call_id and not ev.details.get("ignored"):
            owed.append(Observation(kind="rejected", text=rejection_text(ev.text), call_id=ev.call_id, is_error=True))
        elif isinstance(ev, ModelMessage) and ev.role == OPERATOR:
            owed.append(Observation(kind="operator_message", text=ev.text))
    return exchanges, owed


def _open(exchanges: list[AgentExchange], owed: list[Observation], turn: int, current: AgentExchange | None) -> AgentExchange:
    if current is not None and current.turn == turn:
        return current
    exchange = AgentExchange(turn=turn, observations=list(owed))
    exchanges.append(exchange)
    return exchange


def arguments_json(arguments: dict[str, Any]) -> str:
    """Tool call arguments as a model would have sent them."""
    return json.dumps(arguments, ensure_ascii=False)


__all__ = ["AgentExchange", "arguments_json", "recorded_exchanges"]
