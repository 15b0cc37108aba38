"""The replay agent: makes the tool calls of a recorded trace again, against the live environment.

Each recorded agent turn with tool calls becomes one turn here, with the same
text, tools and arguments; operator calls and injected notes are not repeated.
The recorded results are not used: the live environment answers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stripebench_tui.core.agent import AgentTurn, Observation, Task, ToolRequest
from stripebench_tui.core.events import AGENT, ModelMessage, ToolCall
from stripebench_tui.errors import UserError


def recorded_turns(path: Path) -> list[AgentTurn]:
    """The agent turns of the trace at ``path`` that made tool calls, in order."""
    from stripebench_tui.core.trace import open_trace

    turns: dict[int, AgentTurn] = {}
    for event in open_trace(path).iter_events():
        if isinstance(event, ToolCall) and event.actor == AGENT:
            turn = turns.setdefault(event.turn, AgentTurn(model="replay"))
            turn.tool_calls.append(ToolRequest(call_id=event.call_id, tool=event.tool, arguments=dict(event.arguments)))
        elif isinstance(event, ModelMessage) and event.role == "assistant" and event.text:
            turns.setdefault(event.turn, AgentTurn(model="replay")).text = event.text
    return [turns[t] for t in sorted(turns) if turns[t].tool_calls]


class ReplayAgent:
    """Replays the tool calls of a trace (option trace=PATH) against the live environment."""

    name = "replay"

    def __init__(self, trace: str | Path | None = None, **options: Any) -> None:
        if not trace:
            raise UserError("the replay agent needs a trace to replay: --agent replay --trace PATH")
        self.trace = Path(trace)
        if not self.trace.is_file():
            raise UserError(f"{self.trace}: no such trace file")
        self.options = options
        self.turns = recorded_turns(self.trace)
        self._next = 0

    async def start(self, task: Task) -> None:
        """Nothing to prepare: the turns were read when the agent was made."""

    async def next_turn(self, observations: list[Observation]) -> AgentTurn:
        """The next recorded turn; done after the last."""
        if self._next >= len(self.turns):
            return AgentTurn(text=f"Replayed {len(self.turns)} turns of {self.trace.name}.", done=True, model="replay")
        turn = self.turns[self._next]
        self._next += 1
        return AgentTurn(text=turn.text, tool_calls=[ToolRequest(c.call_id, c.tool, dict(c.arguments))
                                                     for c in turn.tool_calls], model="replay")

    async def close(self) -> None:
        """Nothing to release."""
