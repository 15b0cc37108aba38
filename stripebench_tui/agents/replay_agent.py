"""The replay agent: makes the tool calls of a recorded trace again, against the live environment.

Each recorded agent turn with tool calls becomes one turn here, with the same
text, tools and arguments; operator calls and injected notes are not repeated.
The recorded results are not used: the live environment answers. Ports, URLs
and paths of the recorded episode (its header's ``extra.variables``) are replaced
by the live episode's values in string arguments, so a call to the old APP_URL
reaches the new app.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stripebench_tui.core.agent import AgentTurn, Observation, Task, ToolRequest
from stripebench_tui.core.events import AGENT, ModelMessage, ToolCall
from stripebench_tui.core.substitute import replacer, substitute
from stripebench_tui.core.trace import Trace
from stripebench_tui.errors import UserError
from stripebench_tui.formats.open import opened


def recorded_turns(trace: Trace | Path) -> tuple[list[AgentTurn], dict[str, str]]:
    """The agent turns of ``trace`` (open, or its path) that made tool calls, in order, and its episode variables."""
    trace = opened(trace)
    variables = trace.header.extra.get("variables") if isinstance(trace.header.extra, dict) else None
    turns: dict[int, AgentTurn] = {}
    for event in trace.iter_events():
        if isinstance(event, ToolCall) and event.actor == AGENT:
            turn = turns.setdefault(event.turn, AgentTurn(model="replay"))
            turn.tool_calls.append(ToolRequest(call_id=event.call_id, tool=event.tool, arguments=dict(event.arguments)))
        elif isinstance(event, ModelMessage) and event.role == "assistant" and event.text:
            turns.setdefault(event.turn, AgentTurn(model="replay")).text = event.text
    return [turns[t] for t in sorted(turns) if turns[t].tool_calls], dict(variables or {})


class ReplayAgent:
    """Replays the tool calls of a trace (option trace=PATH) against the live environment."""

    name = "replay"

    def __init__(self, trace: Trace | str | Path | None = None, **options: Any) -> None:
        if not trace:
            raise UserError("the replay agent needs a trace to replay: --agent replay --trace PATH")
        source: Trace | Path
        if isinstance(trace, Trace):  # opened already by the command (a fork): read it, not the file again
            self.trace, source = Path(trace.path), trace
        else:
            self.trace = source = Path(trace)
            if not self.trace.is_file():
                raise UserError(f"{self.trace}: no such trace file")
        self.options = options
        self.turns, self.recorded_vars = recorded_turns(source)
        self.mapping: list[tuple[str, str]] = []
        self._next = 0

    async def start(self, task: Task) -> None:
        """Learn the live episode's ports, URLs and paths to put in place of the recorded ones."""
        pairs = {str(old): str(task.context[k]) for k, old in self.recorded_vars.items()
                 if k in task.context and str(old) and str(old) != str(task.context[k])}
        # Longest first, so a URL is replaced as a whole before the port inside it.
        self.mapping = sorted(pairs.items(), key=lambda kv: len(kv[0]), reverse=True)

    async def next_turn(self, observations: list[Observation]) -> AgentTurn:
        """The next recorded turn; done after the last."""
        if self._next >= len(self.turns):
            return AgentTurn(text=f"Replayed {len(self.turns)} turns of {self.trace.name}.", done=True, model="replay")
        turn = self.turns[self._next]
        self._next += 1
        calls = [ToolRequest(c.call_id, c.tool, substitute(dict(c.arguments), replacer(self.mapping))) for c in turn.tool_calls]
        return AgentTurn(text=replacer(self.mapping)(turn.text), tool_calls=calls, model="replay")

    async def close(self) -> None:
        """Nothing to release."""
