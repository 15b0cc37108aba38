"""A whole episode's summary (``replay --summary``, the headless log's last line) folded one event at a time.

``Reducer`` keeps every turn's messages, calls, requests and objects, because the panes show them; a summary
shows counts, so ``Summariser`` keeps counts: totals, calls and failures per tool, requests by status class and
source, each criterion's timeline, the findings, and the set of turn numbers. Its memory grows with the turns
(one number each), the verdicts and the findings (printed whole, so kept whole), never with the events.

``EpisodeSummary.of_state`` reads the same summary off a reducer's state. That is the definition: the fold
must agree with it on every trace (tests/core/test_summary.py holds it to that, edge cases included).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from stripebench_tui.core.events import (
    EpisodeEnd,
    Event,
    Finding,
    GraderVerdict,
    Header,
    ModelMessage,
    Operator,
    StripeRequest,
    ToolCall,
    ToolResult,
)
from stripebench_tui.core.state import FAILED, EpisodeState, Totals, score_of, verdict_counts_of


@dataclass
class CriterionTimeline:
    """One criterion: its latest status and weight, and every verdict it got as (turn, status)."""

    criterion: str
    status: str
    weight: float
    steps: list[tuple[int, str]] = field(default_factory=list)


@dataclass
class ToolCount:
    calls: int = 0
    failed: int = 0
    first: tuple[int, int] = (0, 0)  # (turn, order) of its first call: ties in the table keep the turns' order


@dataclass
class EpisodeSummary:
    """What the summary tables print: counts, the turn numbers, each criterion's timeline and the findings."""

    header: Header | None = None
    turn_numbers: set[int] = field(default_factory=set)
    last_t: float = 0.0
    totals: Totals = field(default_factory=Totals)
    ended: EpisodeEnd | None = None
    tools: dict[str, ToolCount] = field(default_factory=dict)
    verdicts: dict[str, CriterionTimeline] = field(default_factory=dict)
    requests: int = 0
    request_classes: Counter[str] = field(default_factory=Counter)  # "2xx" -> count
    request_sources: Counter[str] = field(default_factory=Counter)  # "app" -> count, in order of first request
    findings: list[Finding] = field(default_factory=list)

    @property
    def turns(self) -> int:
        """Turns of the agent (turn 0, the setup, left out)."""
        return sum(1 for n in self.turn_numbers if n > 0)

    def tools_used(self) -> list[tuple[str, int, int]]:
        """(tool, calls, failed), most called first; ties in the order the tools first appear, turn by turn."""
        order = sorted(self.tools.items(), key=lambda kv: kv[1].first)
        return [(name, c.calls, c.failed) for name, c in sorted(order, key=lambda kv: -kv[1].calls)]

    def score(self) -> float | None:
        return score_of(self.ended, self.verdicts)

    def verdict_counts(self) -> dict[str, int]:
        return verdict_counts_of(self.verdicts)

    @classmethod
    def of_state(cls, state: EpisodeState) -> EpisodeSummary:
        """The summary of a reducer's state (the definition the streaming fold is held to)."""
        s = cls(header=state.header, last_t=state.last_t, totals=replace(state.totals), ended=state.ended,
                findings=list(state.findings), requests=len(state.requests))
        s.turn_numbers = {t.index for t in state.turns}
        for turn in state.turns:
            for i, c in enumerate(turn.calls):
                count = s.tools.setdefault(c.call.tool, ToolCount(first=(turn.index, i)))
                count.calls += 1
                count.failed += c.status == FAILED
        for crit in state.verdicts.values():
            s.verdicts[crit.criterion] = CriterionTimeline(crit.criterion, crit.status, crit.weight,
                                                  [(v.turn, v.status) for v in crit.history])
        s.request_classes.update(f"{r.status // 100}xx" for r in state.requests)
        s.request_sources.update(r.source or "?" for r in state.requests)
        return s


class Summariser:
    """Folds events into an ``EpisodeSummary`` as ``Reducer`` would fold them into a state, keeping only counts.

    A call's outcome follows the reducer: failed when its result failed or the episode ended while it ran;
    a rejected call stays rejected even when a result for it comes in its own turn; a result for a call not
    open (never seen, already answered, or rejected in another turn) counts as a call of its own.
    """

    def __init__(self, header: Header | None = None) -> None:
        self.summary = EpisodeSummary(header=header)
        self._open: dict[str, tuple[str, int]] = {}  # call_id -> (tool, turn) while the call waits for its result
        self._rejected: set[tuple[int, str]] = set()  # (turn of the call, call_id)
        self._order = 0

    def apply(self, ev: Event) -> EpisodeSummary:
        s = self.summary
        if isinstance(ev, Header):
            s.header = ev
            return s
        s.turn_numbers.add(ev.turn)
        s.last_t = max(s.last_t, ev.t)
        totals = s.totals
        if isinstance(ev, ModelMessage):
            totals.model_messages += 1
            totals.tokens_in += ev.tokens_in or 0
            totals.tokens_out += ev.tokens_out or 0
            totals.cost_usd += ev.cost_usd or 0.0
        elif isinstance(ev, ToolCall):
            totals.tool_calls += 1
            self._count_call(ev.tool, ev.turn)
            self._open[ev.call_id] = (ev.tool, ev.turn)
        elif isinstance(ev, ToolResult):
            opened = self._open.pop(ev.call_id, None)
            if opened is not None:
                tool = opened[0]
            elif (ev.turn, ev.call_id) in self._rejected:
                return s  # the reducer files it under the call rejected in this turn, which stays rejected
            else:
                tool = ev.tool
                self._count_call(tool, ev.turn)
            if ev.is_error or ev.exit_code not in (None, 0):
                s.tools[tool].failed += 1
            totals.tool_time += ev.duration
        elif isinstance(ev, Operator):
            if ev.action == "reject" and ev.call_id in self._open and not ev.details.get("ignored"):
                _, turn = self._open.pop(ev.call_id)
                self._rejected.add((turn, ev.call_id))
        elif isinstance(ev, GraderVerdict):
            crit = s.verdicts.get(ev.criterion)
            if crit is None:
                crit = s.verdicts[ev.criterion] = CriterionTimeline(ev.criterion, ev.status, ev.weight)
            crit.status, crit.weight = ev.status, ev.weight
            crit.steps.append((ev.turn, ev.status))
        elif isinstance(ev, StripeRequest):
            s.requests += 1
            s.request_classes[f"{ev.status // 100}xx"] += 1
            s.request_sources[ev.source or "?"] += 1
        elif isinstance(ev, Finding):
            s.findings.append(ev)
        elif isinstance(ev, EpisodeEnd):
            s.ended = ev
            for tool, _ in self._open.values():  # still running when the episode ended: failed
                s.tools[tool].failed += 1
            self._open.clear()
        return s

    def _count_call(self, tool: str, turn: int) -> None:
        self._order += 1
        first = (turn, self._order)
        count = self.summary.tools.get(tool)
        if count is None:
            self.summary.tools[tool] = ToolCount(calls=1, first=first)
        else:
            count.calls += 1
            count.first = min(count.first, first)


def summarise(events: Iterable[Event], header: Header | None = None) -> EpisodeSummary:
    """The summary of ``events`` (consumed once, one at a time)."""
    fold = Summariser(header)
    for ev in events:
        fold.apply(ev)
    return fold.summary


__all__ = ["EpisodeSummary", "Summariser", "CriterionTimeline", "ToolCount", "summarise"]
