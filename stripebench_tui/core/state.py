"""The episode as seen so far: a pure function of the events (the reducer).

Live runs and replays feed the same events into ``Reducer.apply``; the TUI only
ever draws an ``EpisodeState``. Nothing here reads files or knows about Textual.
``reduce(events)`` is the one-shot form used by tests and headless output.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from stripebench_tui.core.events import (
    ERROR,
    FAIL,
    OPERATOR,
    PASS,
    PENDING,
    EpisodeEnd,
    Event,
    Finding,
    GraderVerdict,
    Header,
    ModelMessage,
    Operator,
    Service,
    StripeObject,
    StripeRequest,
    ToolCall,
    ToolResult,
)

# Status of one tool call, shown as a glyph in the timeline.
RUNNING, OK, FAILED, REJECTED = "running", "ok", "failed", "rejected"

SERVICE_LOG_LINES = 2000  # the newest lines kept per episode; older ones stay in the trace


@dataclass
class CallView:
    """A tool call and, once it arrived, its result."""

    call: ToolCall
    result: ToolResult | None = None
    status: str = RUNNING

    @property
    def duration(self) -> float | None:
        return self.result.duration if self.result else None


@dataclass
class Turn:
    """One step of the episode: what the model said and the tools it (or the operator) ran."""

    index: int
    start: float
    end: float
    first_seq: int
    last_seq: int
    messages: list[ModelMessage] = field(default_factory=list)
    calls: list[CallView] = field(default_factory=list)
    operator_actions: list[Operator] = field(default_factory=list)
    object_ids: list[str] = field(default_factory=list)  # Stripe objects created or changed in this turn
    verdict_changes: list[GraderVerdict] = field(default_factory=list)
    requests: list[StripeRequest] = field(default_factory=list)  # Stripe API requests made during this turn
    findings: list[Finding] = field(default_factory=list)  # detectors' marks on this turn
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0

    @property
    def actor(self) -> str:
        if any(c.call.actor == OPERATOR for c in self.calls) or any(m.role == OPERATOR for m in self.messages):
            return OPERATOR
        if self.index == 0:
            return "setup"
        return "agent"

    @property
    def request_ids(self) -> list[str]:
        return [r.request_id for r in self.requests]

    @property
    def tool_names(self) -> list[str]:
        return [c.call.tool for c in self.calls]

    @property
    def status(self) -> str:
        """Worst status among the turn's calls; ``ok`` for a turn with no calls."""
        statuses = {c.status for c in self.calls}
        for s in (RUNNING, FAILED, REJECTED):
            if s in statuses:
                return s
        return OK

    @property
    def duration(self) -> float:
        return max(0.0, self.end - self.start)


@dataclass
class ObjectView:
    """The latest known state of one Stripe object."""

    id: str
    object_type: str
    data: dict[str, Any]
    first_turn: int
    last_turn: int
    first_seq: int
    last_seq: int
    changes: int = 1
    deleted: bool = False
    last_event_type: str = ""


@dataclass
class VerdictChange:
    seq: int
    t: float
    turn: int
    status: str
    trigger: str = ""


@dataclass
class CriterionState:
    """A grader criterion: its current status, evidence and how it got there."""

    criterion: str
    status: str
    weight: float
    description: str
    evidence: dict[str, Any]
    changed_turn: int
    changed_seq: int
    history: list[VerdictChange] = field(default_factory=list)
    request_id: str = ""  # the Stripe request whose event triggered the latest evaluation, if any


@dataclass
class Totals:
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    tool_calls: int = 0
    tool_time: float = 0.0
    model_messages: int = 0


@dataclass
class EpisodeState:
    """Everything the panes draw, derived only from the events applied so far."""

    header: Header | None = None
    turns: list[Turn] = field(default_factory=list)
    objects: dict[str, ObjectView] = field(default_factory=dict)
    verdicts: dict[str, CriterionState] = field(default_factory=dict)
    totals: Totals = field(default_factory=Totals)
    services: dict[str, str] = field(default_factory=dict)  # name -> latest status
    service_log: deque[Service] = field(default_factory=lambda: deque(maxlen=SERVICE_LOG_LINES))
    operator_actions: list[Operator] = field(default_factory=list)
    requests: list[StripeRequest] = field(default_factory=list)  # the Stripe request log, in order
    findings: list[Finding] = field(default_factory=list)
    pending_calls: dict[str, CallView] = field(default_factory=dict)  # call_id -> call without a result yet
    status: str = ""  # the driver's status (running | paused | waiting_for_approval | ended); "" when never reported
    awaiting_call: str = ""  # call_id of the agent's call waiting for the operator's approval
    ended: EpisodeEnd | None = None
    last_seq: int = -1
    last_t: float = 0.0
    events_applied: int = 0

    @property
    def current_call(self) -> CallView | None:
        """The most recent tool call still waiting for its result."""
        if not self.pending_calls:
            return None
        return next(reversed(self.pending_calls.values()))

    def turn(self, index: int) -> Turn | None:
        """The turn with this index (turn numbers need not start at 0)."""
        lo, hi = 0, len(self.turns)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.turns[mid].index < index:
                lo = mid + 1
            else:
                hi = mid
        if lo < len(self.turns) and self.turns[lo].index == index:
            return self.turns[lo]
        return None

    def objects_by_type(self) -> dict[str, list[ObjectView]]:
        """Objects grouped by Stripe type, each group newest first."""
        groups: dict[str, list[ObjectView]] = {}
        # ``objects`` is filled in order of first appearance (the reducer and the index both add an object when
        # first seen), so newest first is that order reversed: no sort on every seek of a trace with many objects.
        for obj in reversed(self.objects.values()):
            groups.setdefault(obj.object_type, []).append(obj)
        return dict(sorted(groups.items()))

    def score(self) -> float | None:
        """Weighted share of criteria passing; the episode's final score once it has ended."""
        return score_of(self.ended, self.verdicts)

    def verdict_counts(self) -> dict[str, int]:
        return verdict_counts_of(self.verdicts)


def score_of(ended: EpisodeEnd | None, verdicts: dict[str, Any]) -> float | None:
    """The score of an episode: its end's, else the weighted share of criteria (``.weight``, ``.status``) passing."""
    if ended is not None and ended.score is not None:
        return ended.score
    if not verdicts:
        return None
    total = sum(c.weight for c in verdicts.values())
    if total <= 0:
        return None
    return sum(c.weight for c in verdicts.values() if c.status == PASS) / total


def verdict_counts_of(verdicts: dict[str, Any]) -> dict[str, int]:
    """How many criteria are at each status."""
    counts = {PASS: 0, FAIL: 0, PENDING: 0, ERROR: 0}
    for c in verdicts.values():
        counts[c.status] = counts.get(c.status, 0) + 1
    return counts


class Reducer:
    """Applies events one at a time to an ``EpisodeState``.

    ``clock`` (seconds, monotonic) is injectable so that ``elapsed()`` of a live
    episode can be tested without sleeping. ``keep_output=False`` drops tool
    output text from the state (the trace still has it) so that huge episodes fit
    in memory; ``output_bytes`` then records its size.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic, keep_output: bool = True) -> None:
        self.state = EpisodeState()
        self.clock = clock
        self.keep_output = keep_output
        self._last_applied_at: float | None = None

    def elapsed(self) -> float:
        """Seconds since the episode started: the last event's time, plus wall time since it if still live."""
        s = self.state
        if s.ended is not None or self._last_applied_at is None:
            return s.last_t
        return s.last_t + max(0.0, self.clock() - self._last_applied_at)

    def apply_all(self, events: Iterable[Event]) -> EpisodeState:
        for ev in events:
            self.apply(ev)
        return self.state

    def apply(self, ev: Event) -> EpisodeState:
        s = self.state
        self._last_applied_at = self.clock()
        if isinstance(ev, Header):
            s.header = ev
            return s
        s.events_applied += 1
        s.last_seq = max(s.last_seq, ev.seq)
        s.last_t = max(s.last_t, ev.t)
        turn = self._turn_for(ev)
        if isinstance(ev, ModelMessage):
            turn.messages.append(ev)
            s.totals.model_messages += 1
            turn.tokens_in += ev.tokens_in or 0
            turn.tokens_out += ev.tokens_out or 0
            turn.cost_usd += ev.cost_usd or 0.0
            s.totals.tokens_in += ev.tokens_in or 0
            s.totals.tokens_out += ev.tokens_out or 0
            s.totals.cost_usd += ev.cost_usd or 0.0
        elif isinstance(ev, ToolCall):
            view = CallView(call=ev)
            turn.calls.append(view)
            s.pending_calls[ev.call_id] = view
            s.totals.tool_calls += 1
        elif isinstance(ev, ToolResult):
            self._apply_result(turn, ev)
        elif isinstance(ev, StripeObject):
            self._apply_object(turn, ev)
        elif isinstance(ev, GraderVerdict):
            self._apply_verdict(turn, ev)
        elif isinstance(ev, Service):
            s.services[ev.service] = ev.status if ev.status != "log" else s.services.get(ev.service, "running")
            s.service_log.append(ev)
        elif isinstance(ev, Operator):
            self._apply_operator(turn, ev)
        elif isinstance(ev, StripeRequest):
            s.requests.append(ev)
            turn.requests.append(ev)
        elif isinstance(ev, Finding):
            s.findings.append(ev)
            turn.findings.append(ev)
        elif isinstance(ev, EpisodeEnd):
            s.ended = ev
            s.status, s.awaiting_call = "ended", ""
            for view in s.pending_calls.values():
                if view.status == RUNNING:
                    view.status = FAILED
            s.pending_calls.clear()
        return s

    def _turn_for(self, ev: Event) -> Turn:
        turns = self.state.turns
        turn = turns[-1] if turns and turns[-1].index == ev.turn else self.state.turn(ev.turn)
        if turn is None:
            turn = Turn(index=ev.turn, start=ev.t, end=ev.t, first_seq=ev.seq, last_seq=ev.seq)
            turns.append(turn)
            if len(turns) > 1 and turns[-2].index > ev.turn:
                turns.sort(key=lambda x: x.index)
        turn.end = max(turn.end, ev.t)
        turn.last_seq = max(turn.last_seq, ev.seq)
        return turn

    def _apply_operator(self, turn: Turn, ev: Operator) -> None:
        s = self.state
        if ev.action == "status":
            # The driver's own status reports are not a person's actions; they feed the status bar.
            s.status = ev.text
            s.awaiting_call = ev.call_id if ev.text == "waiting_for_approval" else ""
            return
        turn.operator_actions.append(ev)
        s.operator_actions.append(ev)
        view = s.pending_calls.get(ev.call_id)
        if view is None or ev.details.get("ignored"):
            return
        if ev.action == "reject":
            s.pending_calls.pop(ev.call_id).status = REJECTED
        elif ev.action == "edit" and isinstance(ev.details.get("arguments"), dict):
            # Show what actually ran; the original stays in the edit event's details.
            view.call = replace(view.call, arguments=ev.details["arguments"])

    def _apply_result(self, turn: Turn, ev: ToolResult) -> None:
        s = self.state
        if not self.keep_output and ev.output:
            ev = replace(ev, output="", output_bytes=ev.output_bytes or len(ev.output.encode("utf-8", "replace")))
        view = s.pending_calls.pop(ev.call_id, None)
        rejected = None if view is not None else next(
            (c for c in turn.calls if c.call.call_id == ev.call_id and c.status == REJECTED), None)
        if rejected is not None:  # an external harness's rejected call: its result says it was rejected
            rejected.result = ev
            return
        if view is None:
            # A result whose call we never saw (e.g. a trace cut at the start): show it on its own.
            view = CallView(call=ToolCall(seq=ev.seq, t=ev.t, turn=ev.turn, call_id=ev.call_id, tool=ev.tool))
            turn.calls.append(view)
        view.result = ev
        failed = ev.is_error or (ev.exit_code not in (None, 0))
        view.status = FAILED if failed else OK
        s.totals.tool_time += ev.duration

    def _apply_object(self, turn: Turn, ev: StripeObject) -> None:
        objects = self.state.objects
        obj = objects.get(ev.object_id)
        if obj is None:
            obj = ObjectView(
                id=ev.object_id,
                object_type=ev.object_type or str(ev.data.get("object", "")),
                data=ev.data,
                first_turn=ev.turn,
                last_turn=ev.turn,
                first_seq=ev.seq,
                last_seq=ev.seq,
                last_event_type=ev.event_type,
            )
            objects[ev.object_id] = obj
        else:
            if ev.data:
                obj.data = ev.data
            obj.last_turn = ev.turn
            obj.last_seq = ev.seq
            obj.changes += 1
            obj.last_event_type = ev.event_type or obj.last_event_type
        obj.deleted = ev.change == "deleted"
        if ev.object_id not in turn.object_ids:
            turn.object_ids.append(ev.object_id)

    def _apply_verdict(self, turn: Turn, ev: GraderVerdict) -> None:
        verdicts = self.state.verdicts
        change = VerdictChange(seq=ev.seq, t=ev.t, turn=ev.turn, status=ev.status, trigger=ev.trigger)
        crit = verdicts.get(ev.criterion)
        if crit is None:
            crit = CriterionState(
                criterion=ev.criterion,
                status=ev.status,
                weight=ev.weight,
                description=ev.description,
                evidence=ev.evidence,
                changed_turn=ev.turn,
                changed_seq=ev.seq,
                request_id=ev.request_id,
            )
            verdicts[ev.criterion] = crit
        else:
            if crit.status != ev.status:
                crit.changed_turn = ev.turn
                crit.changed_seq = ev.seq
            crit.status = ev.status
            crit.weight = ev.weight
            crit.description = ev.description or crit.description
            crit.evidence = ev.evidence
            crit.request_id = ev.request_id or crit.request_id
        crit.history.append(change)
        turn.verdict_changes.append(ev)


def reduce(events: Iterable[Event], clock: Callable[[], float] = time.monotonic) -> EpisodeState:
    """The state after applying ``events`` in order."""
    return Reducer(clock=clock).apply_all(events)


__all__ = [
    "CallView",
    "CriterionState",
    "EpisodeState",
    "ERROR",
    "FAIL",
    "FAILED",
    "ObjectView",
    "OK",
    "PASS",
    "PENDING",
    "REJECTED",
    "RUNNING",
    "Reducer",
    "Totals",
    "Turn",
    "VerdictChange",
    "reduce",
    "score_of",
    "verdict_counts_of",
]
