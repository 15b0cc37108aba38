"""Where the time went: per turn, model time, tool time, Stripe API time inside tool calls, operator wait, and the
harness's own time by part.

One pass over the events (``profile(events)`` or ``Profiler.feed``, one event at a time):

- model: ``ModelMessage.latency`` (total) and ``ttft`` (time to the first token) of the turn's assistant messages;
- tool: ``ToolResult.duration`` of the turn's calls, less the part of it the tool spent starting (``startup``);
- stripe: ``StripeRequest.latency`` of the requests seen while one of the turn's tool calls was open
  (between its call and its result), i.e. the Stripe time the tool spent;
- wait: time the driver reported itself paused or waiting for approval (status events), counted in the turn
  where the wait began;
- the harness's parts (``PARTS``), from ``HarnessTime`` events and ``ToolResult.startup``:
  setup (before turn 1: dependencies, setup, seed, services, grading's start), tool_start (waiting for the tool
  servers once the services were up, and a tool starting inside its first call, e.g. the browser's Chromium),
  grading (the graders' checks at turn ends and at the end, the detectors' last pass) and publish (catching the
  turn's Stripe objects and requests up, delivering every event, fsyncing the trace).

A turn's wall span starts when its model call began (or its first harness stretch did); ``other`` is what that
span leaves after model, tool, wait and the harness's parts (the driver's own steps between them). The episode's
``other`` is what its wall leaves after all of those, so it also holds time between turns that nobody recorded, and
the totals add up to the wall. A trace from before ``HarnessTime`` has no parts: its harness time stays in ``other``.

``Stopwatch`` is the writing side: the runtime and the driver lap it around their own work and publish what it
gathered as one ``HarnessTime`` event per stretch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from stripebench_tui.core.events import (
    Event,
    HarnessTime,
    ModelMessage,
    Operator,
    StripeRequest,
    ToolCall,
    ToolResult,
)

_WAITING = ("paused", "waiting_for_approval")

# The harness's parts, in the order they are shown, with their labels.
SETUP, TOOL_START, GRADING, PUBLISH = "setup", "tool_start", "grading", "publish"
PARTS = {SETUP: "setup", TOOL_START: "tool start", GRADING: "grading", PUBLISH: "publish"}
PART_MEANINGS = {
    SETUP: "before turn 1: dependencies, setup, seed, services, grading's start",
    TOOL_START: "tool servers still starting once the services were up; a tool starting in its first call (Chromium)",
    GRADING: "the graders' checks at turn ends and at the end; the detectors' last pass",
    PUBLISH: "the turn's Stripe objects and requests caught up, every event delivered, the trace fsynced",
}
# A turn's kinds of time apart from the harness's parts (TurnTime's attributes), in the order they are shown.
KINDS = ("wall", "model", "ttft", "tool", "stripe", "wait", "other")


def label(kind: str) -> str:
    """How a kind of time or a part is named on screen."""
    return PARTS.get(kind, kind.replace("_", " "))


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
    parts: dict[str, float] = field(default_factory=dict)  # the harness's own time, by part

    @property
    def wall(self) -> float:
        return max(0.0, self.end - self.start)

    @property
    def harness(self) -> float:
        return sum(self.parts.values())

    @property
    def other(self) -> float:
        return max(0.0, self.wall - self.model - self.tool - self.wait - self.harness)

    def get(self, kind: str) -> float:
        """Seconds of one kind (``KINDS``) or one part of the harness's time."""
        return getattr(self, kind) if kind in KINDS or kind == "harness" else self.parts.get(kind, 0.0)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"turn": self.turn, **{k: round(getattr(self, k), 6) for k in KINDS},
                               "stripe_requests": self.requests}
        if self.parts:
            out["harness"] = {k: round(v, 6) for k, v in self.parts.items()}
        return out


@dataclass
class TimeProfile:
    """Every turn's ``TurnTime`` and the episode's totals."""

    turns: list[TurnTime] = field(default_factory=list)

    def total(self, kind: str) -> float:
        return sum(t.get(kind) for t in self.turns)

    @property
    def wall(self) -> float:
        if not self.turns:
            return 0.0
        return max(t.end for t in self.turns) - min(t.start for t in self.turns)

    def parts(self) -> list[str]:
        """The harness's parts this episode recorded (none for a trace from before them), known ones first."""
        seen = {name for t in self.turns for name in t.parts}
        return [p for p in PARTS if p in seen] + sorted(seen - PARTS.keys())

    def summary(self) -> dict[str, float]:
        """Episode totals in seconds (``ttft`` is the sum over turns; each recorded part of the harness's time;
        ``other`` what the wall leaves after model, tool, wait and those parts), for ``--summary``, the time screen
        and the ATIF export."""
        out = {k: round(self.total(k), 6) for k in ("model", "ttft", "tool", "stripe", "wait")}
        named = self.total("model") + self.total("tool") + self.total("wait")
        for part in self.parts():
            out[part] = round(self.total(part), 6)
            named += self.total(part)
        out["other"] = round(max(0.0, self.wall - named), 6)
        out["wall"] = round(self.wall, 6)
        return out

    def slowest(self, kind: str = "wall") -> TurnTime | None:
        return max(self.turns, key=lambda t: t.get(kind), default=None)

    def series(self, kind: str) -> list[float]:
        """One value per turn (for a sparkline)."""
        return [t.get(kind) for t in self.turns]


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
            duration = ev.duration or 0.0
            startup = min(max(ev.startup or 0.0, 0.0), duration)
            tt.tool += duration - startup
            if startup:
                tt.parts[TOOL_START] = tt.parts.get(TOOL_START, 0.0) + startup
            self._open_calls.pop(ev.call_id, None)
        elif isinstance(ev, HarnessTime):
            spent = 0.0
            for part, seconds in ev.parts.items():
                if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and seconds > 0:
                    tt.parts[part] = tt.parts.get(part, 0.0) + seconds
                    spent += seconds
            tt.start = min(tt.start, ev.t - spent)  # published when the stretch ended
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


# ---- the writing side ----

F = TypeVar("F", bound=Callable[..., Any])


def harness_part(part: str) -> Callable[[F], F]:
    """Mark a driver hook (turn-end or final) with the part of the harness's time it is (``GRADING``, ``PUBLISH``);
    the driver times each hook under its mark (an unmarked hook's time is left to ``other``)."""

    def mark(hook: F) -> F:
        hook.harness_part = part  # type: ignore[attr-defined]  # read through a bound method too
        return hook

    return mark


def part_of(hook: object) -> str | None:
    """The part a hook was marked with (``harness_part``), or None."""
    return getattr(hook, "harness_part", None)


class Stopwatch:
    """Laps of the harness's own work, gathered by part until ``record`` turns them into one ``HarnessTime``.

    ``lap(part)`` counts the time since the previous lap (or ``since``, or the stopwatch's creation) to ``part``;
    ``lap(None)`` lets it go uncounted. Laps follow one another, so the parts of a stretch never overlap.
    """

    def __init__(self, clock: Callable[[], float], since: float | None = None) -> None:
        self.clock = clock
        self.parts: dict[str, float] = {}
        self._last = clock() if since is None else since

    def restart(self) -> None:
        """Start the next lap now (what happened since the last one is not the harness's)."""
        self._last = self.clock()

    def lap(self, part: str | None) -> None:
        now = self.clock()
        if part:
            self.parts[part] = self.parts.get(part, 0.0) + max(0.0, now - self._last)
        self._last = now

    def record(self, stretch: str) -> HarnessTime:
        """The stretch's event (to publish), and a fresh start for the next stretch's parts."""
        parts, self.parts = self.parts, {}
        return HarnessTime(stretch=stretch, parts={k: round(v, 6) for k, v in parts.items()})


__all__ = ["GRADING", "KINDS", "PART_MEANINGS", "PARTS", "PUBLISH", "SETUP", "TOOL_START", "Profiler", "Stopwatch",
           "TimeProfile", "TurnTime", "harness_part", "label", "part_of", "profile"]
