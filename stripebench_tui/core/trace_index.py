"""The turn index of a trace and fast "state after turn k" lookups.

One pass over the events feeds a ``Reducer`` (tool output dropped, so a
200 MB trace fits in memory) and records, alongside it, what is needed to
rebuild the state as it was at the end of any turn without replaying: turn
boundaries with running totals, every version of each Stripe object and
criterion, and the few tool calls whose result arrived in a later turn.
Turns that the writer produced contiguously and in increasing order (what
``TraceWriter`` always does) then cost O(objects + criteria) per lookup; any
other order is flagged (``exact=False``) and callers replay instead.
"""

from __future__ import annotations

import bisect
from collections import deque
from dataclasses import dataclass, field, replace

from stripebench_tui.core.events import (
    EpisodeEnd,
    Event,
    Finding,
    GraderVerdict,
    Header,
    Operator,
    Service,
    StripeObject,
    StripeRequest,
    ToolCall,
    ToolResult,
)
from stripebench_tui.core.state import (
    RUNNING,
    SERVICE_LOG_LINES,
    CallView,
    CriterionState,
    EpisodeState,
    ObjectView,
    Reducer,
    Totals,
)

_NEVER = float("inf")


@dataclass
class _TurnEnd:
    pos: int  # ordinal of the turn's last event
    last_seq: int
    last_t: float
    events_applied: int
    totals: Totals
    services: dict[str, str]


@dataclass
class TraceIndex:
    """Where each turn starts in the trace, plus what ``Trace.state_at`` needs to be fast.

    ``turns`` are the turn numbers in the order they first appear; ``offsets[i]`` is the
    byte offset (for an in-memory trace: the event ordinal) of the first event of ``turns[i]``.
    """

    turns: list[int] = field(default_factory=list)
    offsets: list[int] = field(default_factory=list)
    event_count: int = 0
    exact: bool = True  # turns contiguous and increasing: fast lookups are exact
    _ends: list[_TurnEnd] = field(default_factory=list, repr=False)
    _final: EpisodeState | None = field(default=None, repr=False)
    _objects: dict[str, list[tuple[int, ObjectView]]] = field(default_factory=dict, repr=False)
    _object_pos: dict[str, list[int]] = field(default_factory=dict, repr=False)  # positions of _objects, for bisect
    _verdicts: dict[str, list[tuple[int, CriterionState, int]]] = field(default_factory=dict, repr=False)
    _service_pos: list[int] = field(default_factory=list, repr=False)
    _service_events: list[Service] = field(default_factory=list, repr=False)
    _operator_pos: list[int] = field(default_factory=list, repr=False)
    _request_pos: list[int] = field(default_factory=list, repr=False)  # positions of the request log's events
    _finding_pos: list[int] = field(default_factory=list, repr=False)
    _late_calls: list[tuple[int, float, CallView]] = field(default_factory=list, repr=False)
    _ended_pos: float = _NEVER
    _turn_pos: dict[int, int] = field(default_factory=dict, repr=False)
    _last_pos: dict[int, int] = field(default_factory=dict, repr=False)  # turn -> ordinal of its last event

    def position_of_turn(self, turn: int) -> int:
        """Index into ``turns`` of this turn number; KeyError if the trace has no such turn."""
        i = self._turn_pos.get(turn)
        if i is None:
            raise KeyError(f"no turn {turn} in this trace")
        return i

    def offset_of_turn(self, turn: int) -> int:
        """Byte offset of the first event of ``turn`` (KeyError if there is no such turn)."""
        return self.offsets[self.position_of_turn(turn)]

    def end_position(self, turn: int | None) -> int:
        """Ordinal of the last event of the latest turn ≤ ``turn`` (None: the last event); -1 if none."""
        if turn is None or not self.turns:
            return self.event_count - 1
        if turn not in self._last_pos:
            earlier = [t for t in self._last_pos if t <= turn]
            if not earlier:
                return -1
            turn = max(earlier)
        return self._last_pos[turn]

    def _turn_index_at_or_before(self, turn: int) -> int:
        if turn in self._turn_pos:
            return self._turn_pos[turn]
        # turns is increasing when exact; otherwise callers take the replay path anyway
        return bisect.bisect_right(self.turns, turn) - 1

    def state_at(self, turn: int | None) -> EpisodeState:
        """The state after the last event of the latest turn ≤ ``turn`` (None: whole episode). Needs ``exact``."""
        final = self._final
        assert final is not None and self.exact
        if not self.turns:
            return EpisodeState(header=final.header)
        i = len(self.turns) - 1 if turn is None else self._turn_index_at_or_before(turn)
        if i < 0:
            return EpisodeState(header=final.header)
        end = self._ends[i]
        p = end.pos
        s = EpisodeState(header=final.header)
        turns = final.turns[: i + 1]
        # Calls decided (result, reject, episode end) after p were still running at p.
        pending: dict[str, CallView] = {}
        for call_pos, decided_pos, view in self._late_calls:
            if call_pos <= p < decided_pos:
                running = CallView(call=view.call, result=None, status=RUNNING)
                pending[view.call.call_id] = running
                ti = self._turn_pos.get(view.call.turn)
                if ti is not None and ti <= i:
                    t = turns[ti]
                    turns[ti] = replace(t, calls=[running if c is view else c for c in t.calls])
        s.turns = turns
        s.pending_calls = pending
        positions = self._object_pos
        for oid, versions in self._objects.items():
            if versions[0][0] > p:
                break  # objects are kept in order of first appearance
            # Snapshots are shared, not copied: a seek on a big trace would spend most of its time copying them.
            s.objects[oid] = versions[bisect.bisect_right(positions[oid], p) - 1][1]
        for name, cversions in self._verdicts.items():
            if cversions[0][0] > p:
                continue
            j = bisect.bisect_right(cversions, p, key=lambda v: v[0]) - 1
            _, snap, n = cversions[j]
            s.verdicts[name] = replace(snap, history=final.verdicts[name].history[:n])
        s.totals = replace(end.totals)
        s.services = dict(end.services)
        k = bisect.bisect_right(self._service_pos, p)
        s.service_log = deque(self._service_events[max(0, k - SERVICE_LOG_LINES) : k], maxlen=SERVICE_LOG_LINES)
        s.operator_actions = final.operator_actions[: bisect.bisect_right(self._operator_pos, p)]
        s.requests = final.requests[: bisect.bisect_right(self._request_pos, p)]
        s.findings = final.findings[: bisect.bisect_right(self._finding_pos, p)]
        s.ended = final.ended if self._ended_pos <= p else None
        s.last_seq, s.last_t, s.events_applied = end.last_seq, end.last_t, end.events_applied
        return s


class IndexBuilder:
    """Feeds events (with their byte offsets) into a reducer and records the index as it goes."""

    def __init__(self, header: Header | None) -> None:
        self.reducer = Reducer(clock=lambda: 0.0, keep_output=False)
        if header is not None:
            self.reducer.apply(header)
        self.index = TraceIndex()
        self._pos = -1
        self._current_turn: int | None = None
        self._open_calls: dict[str, tuple[int, int, CallView]] = {}

    def add(self, ev: Event, offset: int) -> None:
        """Account for the next event, which starts at ``offset``."""
        idx = self.index
        self._pos += 1
        pos = self._pos
        if ev.turn != self._current_turn:
            if self._current_turn is not None:
                self._close_turn()
            if ev.turn in idx._turn_pos:
                idx.exact = False  # a turn resumed after another: lookups must replay
            else:
                if idx.turns and ev.turn < idx.turns[-1]:
                    idx.exact = False
                idx._turn_pos[ev.turn] = len(idx.turns)
                idx.turns.append(ev.turn)
                idx.offsets.append(offset)
            self._current_turn = ev.turn
        idx._last_pos[ev.turn] = pos
        s = self.reducer.apply(ev)
        if isinstance(ev, StripeObject):
            idx._objects.setdefault(ev.object_id, []).append((pos, replace(s.objects[ev.object_id])))
            idx._object_pos.setdefault(ev.object_id, []).append(pos)
        elif isinstance(ev, GraderVerdict):
            crit = s.verdicts[ev.criterion]
            idx._verdicts.setdefault(ev.criterion, []).append((pos, replace(crit, history=[]), len(crit.history)))
        elif isinstance(ev, Service):
            idx._service_pos.append(pos)
            idx._service_events.append(ev)
        elif isinstance(ev, ToolCall):
            view = s.pending_calls.get(ev.call_id)
            if view is not None:
                self._open_calls[ev.call_id] = (pos, ev.turn, view)
        elif isinstance(ev, ToolResult):
            self._decide(ev.call_id, pos, ev.turn)
        elif isinstance(ev, Operator):
            idx._operator_pos.append(pos)
            if ev.action == "reject":
                self._decide(ev.call_id, pos, ev.turn)
        elif isinstance(ev, StripeRequest):
            idx._request_pos.append(pos)
        elif isinstance(ev, Finding):
            idx._finding_pos.append(pos)
        elif isinstance(ev, EpisodeEnd):
            idx._ended_pos = min(idx._ended_pos, pos)
            for call_id in list(self._open_calls):
                self._decide(call_id, pos, ev.turn)

    def _decide(self, call_id: str, pos: int, turn: int) -> None:
        opened = self._open_calls.pop(call_id, None)
        if opened is not None and opened[1] != turn:
            self.index._late_calls.append((opened[0], pos, opened[2]))

    def _close_turn(self) -> None:
        s = self.reducer.state
        self.index._ends.append(
            _TurnEnd(
                pos=self._pos - 1,
                last_seq=s.last_seq,
                last_t=s.last_t,
                events_applied=s.events_applied,
                totals=replace(s.totals),
                services=dict(s.services),
            )
        )

    def finish(self) -> TraceIndex:
        """The finished index (call once, after the last ``add``)."""
        idx = self.index
        self._pos += 1  # _close_turn records the previous position as the turn's end
        if self._current_turn is not None and len(idx._ends) < len(idx.turns):
            self._close_turn()
        for call_pos, _turn, view in self._open_calls.values():
            idx._late_calls.append((call_pos, _NEVER, view))
        idx._late_calls.sort(key=lambda c: c[0])
        idx.event_count = self._pos
        if not idx.exact:
            # Out-of-order turns: list them sorted, each at its first offset (state_at replays anyway).
            pairs = sorted(zip(idx.turns, idx.offsets, strict=False))
            idx.turns = [t for t, _ in pairs]
            idx.offsets = [o for _, o in pairs]
            idx._turn_pos = {t: i for i, t in enumerate(idx.turns)}
        idx._final = self.reducer.state
        return idx
