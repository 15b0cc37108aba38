"""Comparing two episodes: turns aligned by their tool calls, verdict timelines, final Stripe objects.

Turns are aligned with ``difflib.SequenceMatcher`` over per-turn signatures (each call's tool and
arguments), not index by index, so an extra turn on one side shifts nothing after it. Arguments are
normalised first: the episode's own paths, URLs and ports (its header's variables) become
``${NAME}``, and Stripe-shaped ids become ``<id>``, since those differ between any two runs.
A turn pair with the same calls whose outcomes differ (one failed) counts as changed too.
Final objects are matched by type and order of appearance and compared field by field, leaving out
ids and timestamps. Nothing here reads files or draws anything; ``formats.diff`` prints the result.

What the diff reads of an episode is its ``EpisodeDigest``: the sides of its turns, its criteria's timelines, its
final objects and its score. ``Digester`` folds a trace into one event at a time (``stripebench diff`` on traces of
any length), keeping per call its tool, normalised arguments and outcome instead of the reducer's whole state;
``EpisodeDigest.of_state`` reads the same off a reducer's state, the definition the fold is tested against.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from stripebench_tui.core.events import (
    OPERATOR,
    EpisodeEnd,
    Event,
    GraderVerdict,
    Header,
    ModelMessage,
    Operator,
    StripeObject,
    ToolCall,
    ToolResult,
)
from stripebench_tui.core.json_value import JSONValue
from stripebench_tui.core.state import FAILED, OK, REJECTED, RUNNING, EpisodeState, Turn, score_of

SAME, CHANGED, ONLY_A, ONLY_B = "same", "changed", "only_a", "only_b"

# Keys whose values always differ between runs: ids, clocks, secrets, URLs with ids in them.
IGNORED_KEYS = frozenset({"id", "created", "updated", "client_secret", "url", "hosted_invoice_url", "invoice_pdf",
                          "receipt_url", "return_url", "success_url", "cancel_url", "date", "idempotency_key",
                          "request"})
_TIME_SUFFIXES = ("_at", "_period_start", "_period_end", "_date")
# A Stripe-style id: a short lowercase prefix, "_", then a token with a digit in it (cus_…, pi_…, cs_test_…).
_ID = re.compile(r"\b[a-z]{1,10}(?:_test|_live)?_(?=[A-Za-z0-9]*\d)[A-Za-z0-9]{8,}\b")


def _is_ignored(key: str) -> bool:
    return key in IGNORED_KEYS or key.endswith(_TIME_SUFFIXES)


class Normaliser:
    """Rewrites one episode's run-specific text (paths, ports, ids) to placeholders."""

    def __init__(self, header: Header | None) -> None:
        extra = header.extra if header is not None and isinstance(header.extra, dict) else {}
        values = dict(extra.get("variables") or {}) if isinstance(extra.get("variables"), dict) else {}
        if extra.get("episode_dir"):
            values.setdefault("EPISODE_DIR", str(extra["episode_dir"]))
        # Longest first, so a workspace path is not half-replaced by its episode directory.
        self.pairs = sorted(((str(v), f"${{{k}}}") for k, v in values.items() if len(str(v)) >= 4),
                            key=lambda p: -len(p[0]))

    def text(self, text: str) -> str:
        for value, name in self.pairs:
            if value in text:
                text = text.replace(value, name)
        return _ID.sub("<id>", text)

    def arguments(self, arguments: dict[str, Any]) -> str:
        return self.text(json.dumps(arguments, ensure_ascii=False, sort_keys=True))


@dataclass(frozen=True)
class TurnSide:
    """One side's view of a turn in the diff."""

    turn: int
    actor: str
    calls: tuple[tuple[str, str, str], ...]  # (tool, normalised arguments, status)
    text: str  # the last model message, shortened

    @property
    def tools(self) -> tuple[str, ...]:
        return tuple(c[0] for c in self.calls)

    @property
    def signature(self) -> tuple[tuple[str, str], ...]:
        return tuple((tool, args) for tool, args, _ in self.calls) or (("(message)", self.text),)


@dataclass(frozen=True)
class TurnPair:
    kind: str  # same | changed | only_a | only_b
    a: TurnSide | None
    b: TurnSide | None


@dataclass(frozen=True)
class VerdictDiff:
    """A criterion's timelines: statuses with repeats folded (compared), and the turns they changed in (shown)."""

    criterion: str
    a: tuple[str, ...]
    b: tuple[str, ...]
    a_turns: tuple[int, ...] = ()
    b_turns: tuple[int, ...] = ()

    def timeline(self, side: str) -> str:
        """``0: pending → 11: fail`` for side "a" or "b" ("absent" when that episode never graded it)."""
        statuses, turns = (self.a, self.a_turns) if side == "a" else (self.b, self.b_turns)
        if not statuses:
            return "absent"
        if len(turns) != len(statuses):  # built without turns
            return " → ".join(statuses)
        return " → ".join(f"{t}: {s}" for s, t in zip(statuses, turns, strict=True))

    @property
    def same(self) -> bool:
        return self.a == self.b

    @property
    def a_final(self) -> str:
        return self.a[-1] if self.a else "absent"

    @property
    def b_final(self) -> str:
        return self.b[-1] if self.b else "absent"


@dataclass(frozen=True)
class FieldDiff:
    path: str
    a: Any
    b: Any


@dataclass(frozen=True)
class ObjectDiff:
    object_type: str
    ordinal: int  # 1st, 2nd… object of this type in order of appearance
    a_id: str
    b_id: str
    fields: tuple[FieldDiff, ...]  # empty when both sides have the object and it matches

    @property
    def missing(self) -> str:
        return "b" if not self.b_id else "a" if not self.a_id else ""


@dataclass
class EpisodeDiff:
    """Everything that differs between episodes A and B (``equivalent`` when nothing does)."""

    pairs: list[TurnPair] = field(default_factory=list)
    verdicts: list[VerdictDiff] = field(default_factory=list)
    objects: list[ObjectDiff] = field(default_factory=list)  # only the objects that differ
    score: tuple[float | None, float | None] = (None, None)

    @property
    def first_divergence(self) -> int | None:
        """Index into ``pairs`` of the first pair that is not the same, or None."""
        return next((i for i, p in enumerate(self.pairs) if p.kind != SAME), None)

    @property
    def equivalent(self) -> bool:
        return (self.first_divergence is None and all(v.same for v in self.verdicts) and not self.objects
                and _same_score(*self.score))


def _same_score(a: float | None, b: float | None) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and abs(a - b) < 1e-9)


def _side(turn: Turn, norm: Normaliser) -> TurnSide:
    calls = tuple((c.call.tool, norm.arguments(c.call.arguments), c.status) for c in turn.calls)
    text = turn.messages[-1].text if turn.messages else ""
    return TurnSide(turn.index, turn.actor, calls, _side_text(text, norm))


def _side_text(text: str, norm: Normaliser) -> str:
    return norm.text(" ".join(text.split())[:200])


def align(a: list[TurnSide], b: list[TurnSide]) -> list[TurnPair]:
    """Pairs of turns, aligned by call signatures; within a replaced block, turns are paired in order."""
    matcher = difflib.SequenceMatcher(None, [t.signature for t in a], [t.signature for t in b], autojunk=False)
    pairs: list[TurnPair] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            for x, y in zip(a[i1:i2], b[j1:j2], strict=False):
                statuses_differ = tuple(c[2] for c in x.calls) != tuple(c[2] for c in y.calls)
                pairs.append(TurnPair(CHANGED if statuses_differ else SAME, x, y))
            continue
        left, right = a[i1:i2], b[j1:j2]
        for k in range(max(len(left), len(right))):
            x_side = left[k] if k < len(left) else None
            y_side = right[k] if k < len(right) else None
            pairs.append(TurnPair(CHANGED if x_side and y_side else ONLY_A if x_side else ONLY_B, x_side, y_side))
    return pairs


def _timeline(history: list[Any]) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """A criterion's statuses with repeats folded, and the turns they changed in (``history``: ``VerdictChange``s)."""
    out: list[str] = []
    turns: list[int] = []
    for change in history:
        if not out or out[-1] != change.status:
            out.append(change.status)
            turns.append(change.turn)
    return tuple(out), tuple(turns)


def flatten(data: JSONValue, prefix: str = "") -> dict[str, Any]:
    """``{"a.b[0].c": value}`` for a JSON value, leaving out ids and timestamps."""
    out: dict[str, Any] = {}
    if isinstance(data, dict):
        for key in sorted(data):
            if _is_ignored(str(key)):
                continue
            out.update(flatten(data[key], f"{prefix}.{key}" if prefix else str(key)))
    elif isinstance(data, list):
        for i, item in enumerate(data):
            out.update(flatten(item, f"{prefix}[{i}]"))
    elif isinstance(data, str):
        out[prefix] = _ID.sub("<id>", data)
    else:
        out[prefix] = data
    return out


def _objects(a: EpisodeDigest, b: EpisodeDigest) -> list[ObjectDiff]:
    def by_type(digest: EpisodeDigest) -> dict[str, list[Any]]:
        groups: dict[str, list[Any]] = {}
        for obj in sorted(digest.objects, key=lambda o: o.first_seq):
            groups.setdefault(obj.object_type, []).append(obj)
        return groups

    ga, gb = by_type(a), by_type(b)
    out: list[ObjectDiff] = []
    for kind in sorted(set(ga) | set(gb)):
        la, lb = ga.get(kind, []), gb.get(kind, [])
        for k in range(max(len(la), len(lb))):
            x = la[k] if k < len(la) else None
            y = lb[k] if k < len(lb) else None
            if x is None or y is None:
                out.append(ObjectDiff(kind, k + 1, x.id if x else "", y.id if y else "", ()))
                continue
            fa, fb = flatten(x.data), flatten(y.data)
            fields = tuple(FieldDiff(p, fa.get(p), fb.get(p)) for p in sorted(set(fa) | set(fb)) if fa.get(p) != fb.get(p))
            if x.deleted != y.deleted:
                fields += (FieldDiff("(deleted)", x.deleted, y.deleted),)
            if fields:
                out.append(ObjectDiff(kind, k + 1, x.id, y.id, fields))
    return out


@dataclass
class FinalObject:
    """A Stripe object as the episode left it."""

    id: str
    object_type: str
    data: dict[str, Any]
    first_seq: int
    deleted: bool = False


@dataclass
class EpisodeDigest:
    """What the diff compares of one episode."""

    sides: list[TurnSide]  # the agent's turns (turn 0, the setup, left out), in turn order
    timelines: dict[str, tuple[tuple[str, ...], tuple[int, ...]]]  # criterion -> (statuses, turns), repeats folded
    objects: list[FinalObject]
    score: float | None

    @classmethod
    def of_state(cls, state: EpisodeState) -> EpisodeDigest:
        """The digest of a reducer's state (the definition ``Digester`` is held to)."""
        norm = Normaliser(state.header)
        return cls([_side(t, norm) for t in state.turns if t.index > 0],
                   {name: _timeline(c.history) for name, c in state.verdicts.items()},
                   [FinalObject(o.id, o.object_type, o.data, o.first_seq, o.deleted) for o in state.objects.values()],
                   state.score())


@dataclass
class _TurnSoFar:
    calls: list[list[str]] = field(default_factory=list)  # [tool, normalised arguments, status] per call
    text: str = ""  # its last model message
    operator: bool = False  # the operator called a tool or said something in it


@dataclass
class _Criterion:
    status: str
    weight: float
    statuses: list[str] = field(default_factory=list)
    turns: list[int] = field(default_factory=list)


class Digester:
    """Folds events into an ``EpisodeDigest`` as ``Reducer`` would fold them into the state the diff reads.

    Calls end as the reducer ends them: by their result, a rejection, or failed when the episode ends while they
    run; an edit changes the arguments shown; a result for a call not open is a call of its own, except one for a
    call rejected in the result's own turn, which stays rejected.
    """

    def __init__(self, header: Header | None) -> None:
        self.norm = Normaliser(header)
        self._turns: dict[int, _TurnSoFar] = {}
        self._open: dict[str, tuple[list[str], int]] = {}  # call_id -> (its record, its turn) while it runs
        self._rejected: set[tuple[int, str]] = set()  # (turn of the call, call_id)
        self._objects: dict[str, FinalObject] = {}
        self._verdicts: dict[str, _Criterion] = {}
        self._ended: EpisodeEnd | None = None

    def apply(self, ev: Event) -> None:
        if isinstance(ev, Header):
            return
        turn = self._turns.get(ev.turn)
        if turn is None:
            turn = self._turns[ev.turn] = _TurnSoFar()
        if isinstance(ev, ModelMessage):
            turn.text = ev.text
            turn.operator = turn.operator or ev.role == OPERATOR
        elif isinstance(ev, ToolCall):
            record = [ev.tool, self.norm.arguments(ev.arguments), RUNNING]
            turn.calls.append(record)
            turn.operator = turn.operator or ev.actor == OPERATOR
            self._open[ev.call_id] = (record, ev.turn)
        elif isinstance(ev, ToolResult):
            opened = self._open.pop(ev.call_id, None)
            if opened is not None:
                record = opened[0]
            elif (ev.turn, ev.call_id) in self._rejected:
                return  # the reducer files it under the call rejected in this turn, which stays rejected
            else:
                record = [ev.tool, self.norm.arguments({}), RUNNING]
                turn.calls.append(record)
            record[2] = FAILED if ev.is_error or ev.exit_code not in (None, 0) else OK
        elif isinstance(ev, Operator):
            opened = self._open.get(ev.call_id) if ev.action != "status" else None
            if opened is None or ev.details.get("ignored"):
                return
            if ev.action == "reject":
                del self._open[ev.call_id]
                opened[0][2] = REJECTED
                self._rejected.add((opened[1], ev.call_id))
            elif ev.action == "edit" and isinstance(ev.details.get("arguments"), dict):
                opened[0][1] = self.norm.arguments(ev.details["arguments"])  # what actually ran
        elif isinstance(ev, StripeObject):
            obj = self._objects.get(ev.object_id)
            if obj is None:
                obj = self._objects[ev.object_id] = FinalObject(
                    ev.object_id, ev.object_type or str(ev.data.get("object", "")), ev.data, ev.seq)
            elif ev.data:
                obj.data = ev.data
            obj.deleted = ev.change == "deleted"
        elif isinstance(ev, GraderVerdict):
            crit = self._verdicts.get(ev.criterion)
            if crit is None:
                crit = self._verdicts[ev.criterion] = _Criterion(ev.status, ev.weight)
            crit.status, crit.weight = ev.status, ev.weight
            if not crit.statuses or crit.statuses[-1] != ev.status:
                crit.statuses.append(ev.status)
                crit.turns.append(ev.turn)
        elif isinstance(ev, EpisodeEnd):
            self._ended = ev
            for record, _ in self._open.values():
                record[2] = FAILED
            self._open.clear()

    def digest(self) -> EpisodeDigest:
        sides = []
        for index in sorted(self._turns):
            t = self._turns[index]
            if index > 0:
                sides.append(TurnSide(index, OPERATOR if t.operator else "agent",
                                      tuple((tool, args, status) for tool, args, status in t.calls),
                                      _side_text(t.text, self.norm)))
        return EpisodeDigest(sides, {name: (tuple(c.statuses), tuple(c.turns)) for name, c in self._verdicts.items()},
                             list(self._objects.values()), score_of(self._ended, self._verdicts))


def digest(events: Iterable[Event], header: Header | None = None) -> EpisodeDigest:
    """The digest of ``events`` (consumed once, one at a time)."""
    fold = Digester(header)
    for ev in events:
        fold.apply(ev)
    return fold.digest()


def diff_states(a: EpisodeState | EpisodeDigest, b: EpisodeState | EpisodeDigest) -> EpisodeDiff:
    """The diff of two whole episodes (each a reducer's final state, or its digest; tool outputs are not needed)."""
    da, db = (x if isinstance(x, EpisodeDigest) else EpisodeDigest.of_state(x) for x in (a, b))
    names = list(dict.fromkeys([*da.timelines, *db.timelines]))
    verdicts = []
    for n in names:
        (sa, ta), (sb, tb) = da.timelines.get(n, ((), ())), db.timelines.get(n, ((), ()))
        verdicts.append(VerdictDiff(n, sa, sb, ta, tb))
    return EpisodeDiff(align(da.sides, db.sides), verdicts, _objects(da, db), (da.score, db.score))


__all__ = ["CHANGED", "Digester", "EpisodeDiff", "EpisodeDigest", "FinalObject", "FieldDiff", "IGNORED_KEYS", "Normaliser",
           "ONLY_A", "ONLY_B", "ObjectDiff", "SAME",
           "TurnPair", "TurnSide", "VerdictDiff", "align", "diff_states", "digest", "flatten"]
