"""Where the time went: per turn, model time, tool time, Stripe API time inside tool calls, operator wait.

One pass over the events (``profile(events)`` or ``Profiler.feed``):

- model: ``ModelMessage.latency`` (total) and ``ttft`` (time to the first token) of the turn's assistant messages;
- tool: ``ToolResult.duration`` of the turn's calls;
- stripe: ``StripeRequest.latency`` of the requests seen while one of the turn's tool calls was open
  (between its call and its result), i.e. the Stripe time the tool spent;
- wait: time the driver reported itself paused or waiting for approval (status events), counted in the turn
  where the wait began.

A turn's wall span starts when its model call began; ``other`` is what that span leaves after model, tool and wait (grading, the bus, the harness).
The episode's ``other`` is what its wall leaves after all model, tool and wait time, so it also holds the time between
turns (the grading at a turn's end, starting the next model call) and the totals add up to the wall.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from stripebench_tui.core.events import Event, ModelMessage, Operator, StripeRequest, ToolCall, ToolResult

_WAITING = ("paused", "waiting_for_approval")


@dataclass
class TurnTime:
    """Seconds spent in one turn, by kind."""

    turn: int
    start: float = 0.0
    end: float = 0.0
    model: float = 0.0
    ttft: float = 0.0  # first message's time to first token ("" streams count 0)
    tool: float = 0.0
    stripe: float = 0.0
    wait: float = 0.0
    requests: int = 0  # Stripe requests inside its tool calls

    @property
    def wall(self) -> float:
        return max(0.0, self.end - self.start)

    @property
    def other(self) -> float:
        return max(0.0, self.wall - self.model - self.tool - self.wait)

    def as_dict(self) -> dict[str, float | int]:
        return {"turn": self.turn, "wall": round(self.wall, 6), "model": round(self.model, 6), "ttft": round(self.ttft, 6),
                "tool": round(self.tool, 6), "stripe": round(self.stripe, 6), "wait": round(self.wait, 6),
                "other": round(self.other, 6), "stripe_requests": self.requests}


@dataclass
class TimeProfile:
    """Every turn's ``TurnTime`` and the episode's totals."""

    turns: list[TurnTime] = field(default_factory=list)

    def total(self, kind: str) -> float:
        return sum(getattr(t, kind) for t in self.turns)

    @property
    def wall(self) -> float:
        if not self.turns:
            return 0.0
        return max(t.end for t in self.turns) - min(t.start for t in self.turns)

    def summary(self) -> dict[str, float]:
        """Episode totals in seconds (``ttft`` is the sum over turns; ``other`` what the wall leaves after model, tool
        and wait), for ``--summary``, the time screen and the ATIF export."""
        out = {k: round(self.total(k), 6) for k in ("model", "ttft", "tool", "stripe", "wait")}
        out["other"] = round(max(0.0, self.wall - self.total("model") - self.total("tool") - self.total("wait")), 6)
        out["wall"] = round(self.wall, 6)
        return out

    def slowest(self, kind: str = "wall") -> TurnTime | None:
        return max(self.turns, key=lambda t: getattr(t, kind), default=None)

    def series(self, kind: str) -> list[float]:
        """One value per turn (for a sparkline)."""
        return [getattr(t, kind) for t in self.turns]


class Profiler:
    """Folds events into a ``TimeProfile`` as they come (live or from a trace)."""

    def __init__(self) -> None:
        self.profile = TimeProfile()
        self._by_turn: dict[int, TurnTime] = {}
        self._open_calls: dict[str, int] = {}  # call_id -> turn of the call, while its result has not come
        self._wait_since: tuple[float, int] | None = None

    def _turn(self, ev: Event) -> TurnTime:
        tt = self._by_turn.get(ev.turn)
        if tt is None:
            tt = self._by_turn[ev.turn] = TurnTime(ev.turn, start=ev.t, end=ev.t)
            self.profile.turns.append(tt)
            if len(self.profile.turns) > 1 and self.profile.turns[-2].turn > ev.turn:
                self.profile.turns.sort(key=lambda x: x.turn)
        tt.start, tt.end = min(tt.start, ev.t), max(tt.end, ev.t)
        return tt

    def feed(self, ev: Event) -> None:
        if ev.type == "header":
            return
        tt = self._turn(ev)
        if isinstance(ev, ModelMessage):
            if ev.role == "assistant":
                if ev.latency is not None:
                    tt.model += ev.latency
                    tt.start = min(tt.start, ev.t - ev.latency)  # published when the answer ended: the call began earlier
                if ev.ttft is not None and not tt.ttft:
                    tt.ttft = ev.ttft
        elif isinstance(ev, ToolCall):
            self._open_calls[ev.call_id] = ev.turn
        elif isinstance(ev, ToolResult):
            tt.tool += ev.duration or 0.0
            self._open_calls.pop(ev.call_id, None)
        elif isinstance(ev, StripeRequest):
            if self._open_calls and ev.latency is not None:
                owner = self._by_turn.get(next(reversed(self._open_calls.values())), tt)
                owner.stripe += ev.latency
                owner.requests += 1
        elif isinstance(ev, Operator) and ev.action == "status":
            if ev.text in _WAITING:
                if self._wait_since is None:
                    self._wait_since = (ev.t, ev.turn)
            elif self._wait_since is not None:
                since, turn = self._wait_since
                self._by_turn.get(turn, tt).wait += max(0.0, ev.t - since)
                self._wait_since = None


def profile(events: Iterable[Event]) -> TimeProfile:
    """The time profile of these events."""
    p = Profiler()
    for ev in events:
        p.feed(ev)
    return p.profile


__all__ = ["Profiler", "TimeProfile", "TurnTime", "profile"]
