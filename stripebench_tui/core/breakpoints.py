"""Breakpoints as data: a parsed condition, and a matcher that folds events and reports hits.

One expression per breakpoint (``--break`` on the command line, the TUI's dialog)::

    tool GLOB [ARG=GLOB ...]         an agent or operator tool call, e.g. ``tool shell command=*curl*``
    request [METHOD] [PATH] [STATUS] a Stripe request; STATUS is 2xx/4xx/5xx, err (≥ 400) or a code,
                                      e.g. ``request POST /v1/refunds* 4xx``
    verdict [fail|pass|error|any] [CRITERION]  a criterion's status changed (to fail, or any change)
    finding [DETECTOR]               a detector's finding, e.g. ``finding 400-as-success``
    turns>=N | tokens>=N | cost>=USD | time>=SECONDS   a budget crossed (once); ``>`` works too

The same ``BreakpointSet`` serves a live episode (a bus subscriber; the driver pauses
before its next model call when ``take_hits`` has any) and a replay (the events of a
trace fed in order; playback stops at a hit's turn). Nothing here knows about the UI.
"""

from __future__ import annotations

import fnmatch
import json
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from stripebench_tui.core.events import Event, Finding, GraderVerdict, ModelMessage, StripeRequest, ToolCall
from stripebench_tui.core.json_value import JSONValue

# Operator.action of the events that record breakpoints (added, removed, hit).
BREAK_ADD, BREAK_REMOVE, BREAK_HIT = "break_add", "break_remove", "break_hit"

KINDS = ("tool", "request", "verdict", "finding", "budget")
BUDGETS = ("turns", "tokens", "cost", "time")
SYNTAX = ("tool GLOB [ARG=GLOB…] · request [METHOD] [PATH-GLOB] [2xx|4xx|5xx|err|CODE] · "
          "verdict [fail|pass|error|any] [CRITERION-GLOB] · finding [DETECTOR-GLOB] · "
          "turns>=N · tokens>=N · cost>=USD · time>=SECONDS")

_BUDGET_RE = re.compile(r"^(turns|tokens|cost|time)\s*(>=|>)\s*([0-9]+(?:\.[0-9]+)?)$")
_METHODS = {"GET", "POST", "DELETE", "PUT", "PATCH"}
_STATUS_RE = re.compile(r"^(?:[1-5]xx|err|[1-5][0-9][0-9])$", re.IGNORECASE)
_VERDICT_TO = ("fail", "pass", "error", "any")


class BreakpointError(ValueError):
    """An expression that is not a breakpoint (the message is one line, with the syntax)."""


@dataclass(frozen=True)
class Condition:
    """What a breakpoint matches; ``expr`` is how the user wrote it."""

    kind: str
    expr: str
    glob: str = "*"  # tool name, request path, criterion or detector
    args: tuple[tuple[str, str], ...] = ()  # tool argument globs
    method: str = ""  # request method ("" any)
    status: str = ""  # request status class ("" any)
    to: str = "any"  # verdict: the status it changes to
    budget: str = ""  # turns | tokens | cost | time
    limit: float = 0.0
    strict: bool = False  # budget: ``>`` rather than ``>=``


def parse(expr: str, detectors: Iterable[str] | None = None) -> Condition:
    """The condition ``expr`` describes; ``BreakpointError`` (one line) when it describes none.

    ``detectors``: the known detector names (the findings registry, which core does not import); given, a
    ``finding`` breakpoint whose glob matches none of them is an error naming them.
    """
    text = " ".join(expr.split())
    if not text:
        raise BreakpointError(f"empty breakpoint; write one of: {SYNTAX}")
    budget = _BUDGET_RE.match(text.replace(" ", ""))
    if budget:
        name, op, value = budget.groups()
        return Condition("budget", text, budget=name, limit=float(value), strict=op == ">")
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise BreakpointError(f"breakpoint {text!r}: {exc}") from None
    kind, rest = words[0].lower(), words[1:]
    if kind == "tool":
        if not rest or "=" in rest[0]:
            raise BreakpointError(f"breakpoint {text!r}: say which tool, e.g. `tool shell` or `tool browser_*`")
        args = []
        for word in rest[1:]:
            name, eq, glob = word.partition("=")
            if not eq or not name:
                raise BreakpointError(f"breakpoint {text!r}: {word!r} is not ARG=GLOB")
            args.append((name, glob))
        return Condition("tool", text, glob=rest[0], args=tuple(args))
    if kind == "request":
        method, status, path = "", "", "*"
        for word in rest:
            if word.upper() in _METHODS and not method:
                method = word.upper()
            elif _STATUS_RE.match(word) and not status:
                status = word.lower()
            elif path == "*" and (word.startswith("/") or "*" in word):
                path = word
            else:
                raise BreakpointError(f"breakpoint {text!r}: {word!r} is not a method, a path (/v1/…) or a status (4xx)")
        return Condition("request", text, glob=path, method=method, status=status)
    if kind == "verdict":
        to, glob = "any", "*"
        for word in rest:
            if word.lower() in _VERDICT_TO and to == "any":
                to = word.lower()
            elif glob == "*":
                glob = word
            else:
                raise BreakpointError(f"breakpoint {text!r}: write `verdict [fail|pass|error|any] [CRITERION]`")
        return Condition("verdict", text, glob=glob, to=to)
    if kind == "finding":
        if len(rest) > 1:
            raise BreakpointError(f"breakpoint {text!r}: write `finding [DETECTOR]`")
        glob = rest[0] if rest else "*"
        known = list(detectors) if detectors is not None else None
        if known is not None and not any(fnmatch.fnmatchcase(name, glob) for name in known):
            raise BreakpointError(f"breakpoint {text!r}: no detector matches {glob!r}; "
                                  f"the detectors are {', '.join(known)}")
        return Condition("finding", text, glob=glob)
    raise BreakpointError(f"unknown breakpoint {text!r}; write one of: {SYNTAX}")


def _status_matches(want: str, status: int) -> bool:
    if not want:
        return True
    if want == "err":
        return status >= 400
    if want.endswith("xx"):
        return str(status).startswith(want[0]) and len(str(status)) == 3
    return str(status) == want


def _arg_text(value: JSONValue) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


@dataclass
class Breakpoint:
    """A numbered condition (numbers are never reused within a set)."""

    id: int
    condition: Condition
    enabled: bool = True

    @property
    def expr(self) -> str:
        return self.condition.expr


@dataclass(frozen=True)
class BreakHit:
    """A breakpoint matched an event."""

    breakpoint: int  # Breakpoint.id
    expr: str
    seq: int
    turn: int
    reason: str  # one line for the operator

    def details(self) -> dict[str, Any]:
        """The ``details`` of the ``break_hit`` operator event that records it."""
        return {"id": self.breakpoint, "expr": self.expr, "seq": self.seq, "turn": self.turn}


@dataclass
class _Usage:
    tokens: int = 0
    cost: float = 0.0
    turn: int = 0
    t: float = 0.0


@dataclass
class BreakpointSet:
    """The breakpoints of one episode, and the running usage budgets are checked against."""

    breakpoints: list[Breakpoint] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._next_id = max((b.id for b in self.breakpoints), default=0) + 1
        self._usage = _Usage()
        self._verdicts: dict[str, str] = {}
        self._crossed: set[int] = set()  # budget breakpoints already hit (a budget is crossed once)
        self._hits: list[BreakHit] = []

    @classmethod
    def from_exprs(cls, exprs: Iterable[str]) -> BreakpointSet:
        """A set of the parsed expressions (the first bad one raises ``BreakpointError``)."""
        out = cls()
        for expr in exprs:
            out.add(expr)
        return out

    def add(self, expr: str) -> Breakpoint:
        bp = Breakpoint(self._next_id, parse(expr))
        self._next_id += 1
        self.breakpoints.append(bp)
        return bp

    def remove(self, bp_id: int) -> Breakpoint | None:
        """Remove breakpoint ``bp_id``; the removed one, or None if there is none by that number."""
        for i, bp in enumerate(self.breakpoints):
            if bp.id == bp_id:
                return self.breakpoints.pop(i)
        return None

    def __len__(self) -> int:
        return len(self.breakpoints)

    def listing(self) -> list[str]:
        """One line per breakpoint, for the dialog and the headless printer."""
        return [f"#{bp.id} {bp.expr}" for bp in self.breakpoints]

    # ---- matching ----

    def feed(self, ev: Event) -> list[BreakHit]:
        """Fold one event in; the hits it causes (also kept for ``take_hits``)."""
        hits = [h for bp in self.breakpoints if bp.enabled and (h := self._match(bp, ev)) is not None]
        self._account(ev)
        self._hits.extend(hits)
        return hits

    def __call__(self, ev: Event) -> None:
        """Bus handler form of ``feed``."""
        self.feed(ev)

    def take_hits(self) -> list[BreakHit]:
        """Hits since the last call (the driver pauses when there are any)."""
        hits, self._hits = self._hits, []
        return hits

    def _account(self, ev: Event) -> None:
        u = self._usage
        u.turn, u.t = max(u.turn, ev.turn), max(u.t, ev.t)
        if isinstance(ev, ModelMessage):
            u.tokens += (ev.tokens_in or 0) + (ev.tokens_out or 0)
            u.cost += ev.cost_usd or 0.0
        elif isinstance(ev, GraderVerdict):
            self._verdicts[ev.criterion] = ev.status

    def _match(self, bp: Breakpoint, ev: Event) -> BreakHit | None:
        c = bp.condition
        reason = ""
        if c.kind == "tool" and isinstance(ev, ToolCall):
            if fnmatch.fnmatchcase(ev.tool, c.glob) and all(
                name in ev.arguments and fnmatch.fnmatchcase(_arg_text(ev.arguments[name]), glob) for name, glob in c.args
            ):
                reason = f"tool call {ev.tool}"
        elif c.kind == "request" and isinstance(ev, StripeRequest):
            if ((not c.method or ev.method.upper() == c.method) and fnmatch.fnmatchcase(ev.path, c.glob)
                    and _status_matches(c.status, ev.status)):
                reason = f"Stripe request {ev.method} {ev.path} → {ev.status}"
        elif c.kind == "verdict" and isinstance(ev, GraderVerdict):
            before = self._verdicts.get(ev.criterion, "pending")
            if before != ev.status and fnmatch.fnmatchcase(ev.criterion, c.glob) and c.to in ("any", ev.status):
                reason = f"verdict {ev.criterion}: {before} → {ev.status}"
        elif c.kind == "finding" and isinstance(ev, Finding):
            if fnmatch.fnmatchcase(ev.detector, c.glob):
                reason = f"finding {ev.detector}: {ev.message}"
        elif c.kind == "budget" and bp.id not in self._crossed:
            reason = self._budget(c, ev)
            if reason:
                self._crossed.add(bp.id)
        if not reason:
            return None
        return BreakHit(bp.id, bp.expr, ev.seq, ev.turn, f"breakpoint #{bp.id} ({bp.expr}): {reason}")

    def _budget(self, c: Condition, ev: Event) -> str:
        u = self._usage
        if c.budget == "turns":
            value: float = max(u.turn, ev.turn)
        elif c.budget == "time":
            value = max(u.t, ev.t)
        elif c.budget == "tokens" and isinstance(ev, ModelMessage):
            value = u.tokens + (ev.tokens_in or 0) + (ev.tokens_out or 0)
        elif c.budget == "cost" and isinstance(ev, ModelMessage):
            value = u.cost + (ev.cost_usd or 0.0)
        else:
            return ""
        crossed = value > c.limit if c.strict else value >= c.limit
        return f"{c.budget} reached {budget_text(c.budget, value)}" if crossed else ""


def budget_text(budget: str, value: float) -> str:
    """A budget's value for people: ``3.4 s``, ``$0.0412``, ``$12.50``, ``12,345`` (tokens, turns)."""
    if budget == "time":
        return f"{value:.1f} s"
    if budget == "cost":
        if value >= 1:
            return f"${value:,.2f}"
        whole, _, frac = f"{value:.4f}".partition(".")  # small costs keep their digits: $0.0412, $0.04
        return f"${whole}.{frac.rstrip('0').ljust(2, '0')}"
    return f"{int(value):,}"


def recorded_breakpoints(operator_events: Iterable[Any]) -> list[tuple[int, str]]:
    """(number, expression) of the breakpoints in force after these operator events (a live episode's list)."""
    current: dict[int, str] = {}
    for ev in operator_events:
        action, details = getattr(ev, "action", ""), getattr(ev, "details", {}) or {}
        if details.get("ignored") or not isinstance(details.get("id"), int):
            continue
        if action == BREAK_ADD:
            current[details["id"]] = ev.text
        elif action == BREAK_REMOVE:
            current.pop(details["id"], None)
    return sorted(current.items())


def hits_in(events: Iterable[Event], breakpoints: BreakpointSet) -> list[BreakHit]:
    """Every hit over a recorded episode, in order (a replay stops at these)."""
    out: list[BreakHit] = []
    for ev in events:
        out.extend(breakpoints.feed(ev))
    breakpoints.take_hits()
    return out


__all__ = ["BREAK_ADD", "BREAK_HIT", "BREAK_REMOVE", "Breakpoint", "BreakpointError", "BreakpointSet", "Condition",
           "BreakHit", "SYNTAX", "budget_text", "hits_in", "parse", "recorded_breakpoints"]
