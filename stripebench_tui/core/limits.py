"""Episode limits (turns, wall time, tokens, cost) and the usage they are checked against.

Wall time is *active* time: ``ActiveTime`` subtracts the spans during which the
driver was paused or waiting for the operator, so a person inspecting a paused
episode does not time it out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from stripebench_tui.core.operator import BUDGET, MAX_TURNS, WALL_TIME


@dataclass
class Limits:
    """When the episode must end even though the agent is not done; None means no limit."""

    max_turns: int | None = None
    wall_time: float | None = None  # seconds, not counting time paused
    max_tokens: int | None = None  # tokens in + out over all turns
    max_cost_usd: float | None = None


@dataclass
class Usage:
    """What the agent has used so far."""

    agent_turns: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0

    @property
    def tokens(self) -> int:
        return self.tokens_in + self.tokens_out


class ActiveTime:
    """Seconds since ``start`` by ``clock``, minus the spans marked as on hold."""

    def __init__(self, clock: Callable[[], float], start: float) -> None:
        self.clock = clock
        self.start = start
        self._held = 0.0
        self._held_since: float | None = None

    def hold(self, on: bool) -> None:
        """Start (``on``) or end a span that does not count."""
        now = self.clock()
        if self._held_since is not None:
            self._held += now - self._held_since
            self._held_since = None
        if on:
            self._held_since = now

    def __call__(self) -> float:
        held = self._held
        if self._held_since is not None:
            held += self.clock() - self._held_since
        return max(0.0, self.clock() - self.start - held)


def exceeded(limits: Limits, usage: Usage, active: float) -> tuple[str, str] | None:
    """The (episode_end reason, detail) of the first limit reached, or None."""
    if limits.max_turns is not None and usage.agent_turns >= limits.max_turns:
        return MAX_TURNS, ""
    if limits.wall_time is not None and active >= limits.wall_time:
        return WALL_TIME, ""
    if limits.max_tokens is not None and usage.tokens >= limits.max_tokens:
        return BUDGET, f"{usage.tokens} tokens used of {limits.max_tokens}"
    if limits.max_cost_usd is not None and usage.cost_usd >= limits.max_cost_usd:
        return BUDGET, f"${usage.cost_usd:.4f} spent of ${limits.max_cost_usd:.4f}"
    return None


__all__ = ["ActiveTime", "Limits", "Usage", "exceeded"]
