"""The human agent: the operator supplies each tool call (from the TUI, or typed on stdin when headless).

Whoever drives it calls ``submit`` (a tool call), ``say`` (a message) or
``finish``; each submission is one turn. ``parse_line`` reads the headless form::

    shell {"command": "ls"}        a tool call: the tool name, then its arguments as JSON
    say Looking at the server.     a message without a tool call
    done                           end the episode
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from stripebench_tui.core.agent import AgentTurn, Observation, Task, ToolRequest
from stripebench_tui.errors import UserError


class HumanAgent:
    """The operator types each tool call (TUI or stdin)."""

    name = "human"

    def __init__(self, **options: Any) -> None:
        self.options = options
        self.queue: asyncio.Queue[AgentTurn] = asyncio.Queue()
        self.task: Task | None = None
        self.observations: list[Observation] = []  # what the last turn's calls returned, for whoever drives us
        self._calls = 0

    async def start(self, task: Task) -> None:
        """Keep the task (its tool list is what the operator may call)."""
        self.task = task

    def submit(self, tool: str, arguments: dict[str, Any] | None = None, text: str = "") -> None:
        """Queue one tool call as the next turn."""
        self._calls += 1
        self.queue.put_nowait(AgentTurn(text=text, tool_calls=[ToolRequest(f"h{self._calls}", tool, dict(arguments or {}))],
                                        model="human"))

    def say(self, text: str) -> None:
        """Queue a message without a tool call."""
        self.queue.put_nowait(AgentTurn(text=text, model="human"))

    def finish(self, text: str = "Done.") -> None:
        """End the episode after the turns already queued."""
        self.queue.put_nowait(AgentTurn(text=text, done=True, model="human"))

    def parse_line(self, line: str) -> None:
        """Queue what one headless input line asks for; UserError (nothing queued) for a malformed line."""
        line = line.strip()
        if not line:
            return
        word, _, rest = line.partition(" ")
        if word == "done":
            self.finish(rest.strip() or "Done.")
        elif word == "say":
            self.say(rest.strip())
        else:
            try:
                arguments = json.loads(rest) if rest.strip() else {}
            except json.JSONDecodeError as exc:
                raise UserError(f"arguments of {word} are not JSON: {exc.msg} (e.g. shell {{\"command\": \"ls\"}})") from None
            if not isinstance(arguments, dict):
                raise UserError(f"arguments of {word} must be a JSON object")
            self.submit(word, arguments)

    async def next_turn(self, observations: list[Observation]) -> AgentTurn:
        """Wait for the operator's next submission."""
        self.observations = list(observations)
        return await self.queue.get()

    async def close(self) -> None:
        """Nothing to release."""
