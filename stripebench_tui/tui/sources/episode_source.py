"""Where the screen's episode comes from: an event source.

The screen only draws ``EpisodeState``s and per-turn events; a source supplies
them. ``TraceSource`` reads a recorded trace (replay); ``EventListSource`` holds
events in memory (tests, and the shape a live bus can append to in the next
issue). Methods marked "may block" are called from worker threads.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

from stripebench_tui.core.events import Event, GraderVerdict, Header, ModelMessage, ToolResult
from stripebench_tui.core.state import EpisodeState, Reducer, Turn
from stripebench_tui.core.trace import Trace


@dataclass(frozen=True)
class TurnRow:
    """What the timeline shows for one turn."""

    index: int
    actor: str
    tools: tuple[str, ...]
    status: str
    start: float
    duration: float
    verdict_changes: int
    label: str = ""  # what the turn did, when it ran no tool
    findings: int = 0  # detectors' marks on this turn


class EpisodeSource(Protocol):
    """The calls the replay screen makes; a live bus can implement the same."""

    header: Header | None
    live: bool

    def turn_count_hint(self) -> int | None:
        """A cheap guess at the number of turns, for the first paint (None if unknown)."""

    def quick_turns(self) -> list[int] | None:
        """Turn numbers if they are known without reading the whole episode, else None."""

    def scan_turns(self) -> Iterator[int] | None:
        """When no turn list is known cheaply: turn numbers as a streaming pass finds them (the pass may block;
        each turn is readable with ``events_for_turn`` once yielded, and ``quick_turns`` lists them all once it is
        over, unless the pass found them unusable); None when there is nothing to stream."""

    def turn_numbers(self) -> list[int]:
        """Every turn number in order (may block: builds the index that ``state_at`` needs)."""

    def events_for_turn(self, turn: int) -> list[Event]:
        """The events of one turn, outputs inline (capped ones as written)."""

    def state_at(self, turn: int | None) -> EpisodeState:
        """The state after the last event of ``turn`` (None: the whole episode); may block."""

    def full_output(self, result: ToolResult) -> str:
        """A tool result's whole output, read from its sidecar if it was capped."""

    def iter_events(self) -> Iterable[Event]:
        """Every event in log order (for the marks and timings scan); may block."""


def turn_from_events(turn: int, events: Iterable[Event]) -> Turn:
    """The ``Turn`` made by one turn's events alone (keeps outputs, for the detail pane)."""
    state = Reducer(clock=lambda: 0.0).apply_all(events)
    found = state.turn(turn)
    if found is None:
        return Turn(index=turn, start=0.0, end=0.0, first_seq=-1, last_seq=-1)
    return found


def row_for(turn: int, events: list[Event]) -> TurnRow:
    """The timeline row of a turn, from that turn's events."""
    return row_from_turn(turn_from_events(turn, events))


def row_from_turn(t: Turn) -> TurnRow:
    """The timeline row of a turn already in an ``EpisodeState``."""
    return TurnRow(
        index=t.index,
        actor=t.actor,
        tools=tuple(t.tool_names),
        status=t.status if t.calls else "",
        start=t.start,
        duration=t.duration,
        verdict_changes=len(t.verdict_changes),
        label=_label(t),
        findings=len(t.findings),
    )


def _label(t: Turn) -> str:
    if t.messages:
        return f"({t.messages[-1].role} message)"
    if t.operator_actions:
        return f"(operator {t.operator_actions[-1].action})"
    if t.verdict_changes:
        return "(grader)"
    if t.object_ids:
        return "(stripe objects)"
    return "(no events)"


class TraceSource:
    """A recorded trace opened with ``formats.open.open_episode`` (duck-typed, so tests may pass a stand-in)."""

    live = False

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.header: Header | None = trace.header
        # The reader keeps one file handle; workers and the UI thread take turns on it.
        self._lock = threading.RLock()

    def turn_count_hint(self) -> int | None:
        last = getattr(self.trace, "last_event", None)
        return None if last is None else int(last.turn)

    def quick_turns(self) -> list[int] | None:
        # The writer's turns.idx sidecar lists turn offsets; reading it is O(turns), not O(bytes).
        with self._lock:
            return self.trace.quick_turns()

    def scan_turns(self) -> Iterator[int] | None:
        # A trace without its turns.idx: the pass writes one for the next open (core/cold_index.py).
        with self._lock:
            return self.trace.scan_turns()

    def turn_numbers(self) -> list[int]:
        index = self.trace.index()  # thread-safe per its contract; may take seconds
        return list(index.turns)

    def events_for_turn(self, turn: int) -> list[Event]:
        with self._lock:
            return list(self.trace.events_for_turn(turn))

    def state_at(self, turn: int | None) -> EpisodeState:
        with self._lock:
            return self.trace.state_at(turn, keep_output=False)

    def full_output(self, result: ToolResult) -> str:
        with self._lock:
            return self.trace.full_output(result)

    def iter_events(self) -> Iterable[Event]:
        """Every event in order; may block (the reader opens its own handle, so no lock is held)."""
        return self.trace.iter_events()


class EventListSource:
    """Events held in memory, in log order; ``append`` lets a live feed grow it."""

    live = False

    def __init__(self, events: Iterable[Event], header: Header | None = None) -> None:
        self.header = header
        self._events: list[Event] = []
        self._turns: list[int] = []
        self._by_turn: dict[int, list[Event]] = {}
        for ev in events:
            self.append(ev)

    def append(self, ev: Event) -> None:
        if isinstance(ev, Header):
            self.header = ev
            return
        self._events.append(ev)
        bucket = self._by_turn.get(ev.turn)
        if bucket is None:
            bucket = self._by_turn[ev.turn] = []
            bisect.insort(self._turns, ev.turn)
        bucket.append(ev)

    def turn_count_hint(self) -> int | None:
        return len(self._turns)

    def quick_turns(self) -> list[int] | None:
        return list(self._turns)

    def scan_turns(self) -> Iterator[int] | None:
        return None  # quick_turns always knows

    def turn_numbers(self) -> list[int]:
        return list(self._turns)

    def events_for_turn(self, turn: int) -> list[Event]:
        return list(self._by_turn.get(turn, ()))

    def state_at(self, turn: int | None) -> EpisodeState:
        reducer = Reducer(clock=lambda: 0.0, keep_output=False)
        if self.header is not None:
            reducer.apply(self.header)
        for ev in self._events:
            if turn is None or ev.turn <= turn:
                reducer.apply(ev)
        return reducer.state

    def full_output(self, result: ToolResult) -> str:
        return result.output

    def iter_events(self) -> Iterable[Event]:
        return list(self._events)


def searchable_parts(events: list[Event], source: EpisodeSource) -> list[tuple[str, int, str]]:
    """(kind, number, text) of one turn's searchable text: messages (and reasoning), then outputs."""
    parts: list[tuple[str, int, str]] = []
    messages = [e for e in events if isinstance(e, ModelMessage)]
    for i, m in enumerate(messages):
        parts.append(("message", i, m.text + ("\n" + m.reasoning if m.reasoning else "")))
    results = [e for e in events if isinstance(e, ToolResult)]
    for i, r in enumerate(results):
        parts.append(("output", i, source.full_output(r)))
    return parts


def verdict_changes(events: list[Event], statuses: dict[str, str]) -> bool:
    """Whether these events change any criterion's status; updates ``statuses`` as it goes."""
    changed = False
    for ev in events:
        if isinstance(ev, GraderVerdict):
            if statuses.get(ev.criterion) != ev.status:
                changed = True
            statuses[ev.criterion] = ev.status
    return changed


def verdict_change_turns(state: EpisodeState) -> list[int]:
    """Sorted turn numbers in which some criterion's status changed (its first verdict counts)."""
    turns: set[int] = set()
    for crit in state.verdicts.values():
        previous = None
        for change in crit.history:
            if change.status != previous:
                turns.add(change.turn)
            previous = change.status
    return sorted(turns)
