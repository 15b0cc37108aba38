"""The no-op agent: the baseline every grader must score 0."""

from __future__ import annotations

from typing import Any

from stripebench_tui.core.agent import AgentTurn, Observation, Task


class NoopAgent:
    """Ends the episode at once without calling a tool (the zero baseline)."""

    name = "noop"

    def __init__(self, **options: Any) -> None:
        # Options such as model or on_retry mean nothing here; accepting them lets a
        # driver pass the same set to any agent.
        self.options = options

    async def start(self, task: Task) -> None:
        """Nothing to prepare."""

    async def next_turn(self, observations: list[Observation]) -> AgentTurn:
        """Always the same: done, no tool calls."""
        return AgentTurn(text="No-op agent: ending without doing anything.", done=True, model="noop")

    async def close(self) -> None:
        """Nothing to release."""
