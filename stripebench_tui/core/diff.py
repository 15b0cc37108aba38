"""Comparing two episodes: turns aligned by their tool calls, verdict timelines, final Stripe objects.

Turns are aligned with ``difflib.SequenceMatcher`` over per-turn signatures (each call's tool and
arguments), not index by index, so an extra turn on one side shifts nothing after it. Arguments are
normalised first: the episode's own paths, URLs and ports (its header's variables) become
``${NAME}``, and Stripe-shaped ids become ``<id>``, since those differ between any two runs.
A turn pair with the same calls whose outcomes differ (one failed) counts as changed too.
Final objects are matched by type and order of appearance and compared field by field, leaving out
ids and timestamps. Nothing here reads files or draws anything; ``formats.diff`` prints the result.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from stripebench_tui.core.state import EpisodeState, Turn

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

    def __init__(self, state: EpisodeState) -> None:
        header = state.header
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
        return " → ".join(f"{t}: {s}" for s, t in zip(statuses, turns))

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
    text = turn.messages[-1].text.strip() if turn.messages else ""
    return TurnSide(turn.index, turn.actor, calls, norm.text(" ".join(text.split())[:200]))


def align(a: list[TurnSide], b: list[TurnSide]) -> list[TurnPair]:
    """Pairs of turns, aligned by call signatures; within a replaced block, turns are paired in order."""
    matcher = difflib.SequenceMatcher(None, [t.signature for t in a], [t.signature for t in b], autojunk=False)
    pairs: list[TurnPair] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            for x, y in zip(a[i1:i2], b[j1:j2]):
                statuses_differ = tuple(c[2] for c in x.calls) != tuple(c[2] for c in y.calls)
                pairs.append(TurnPair(CHANGED if statuses_differ else SAME, x, y))
            continue
        left, right = a[i1:i2], b[j1:j2]
        for k in range(max(len(left), len(right))):
            x = left[k] if k < len(left) else None
            y = right[k] if k < len(right) else None
            pairs.append(TurnPair(CHANGED if x and y else ONLY_A if x else ONLY_B, x, y))
    return pairs


def _timeline(state: EpisodeState, criterion: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
    crit = state.verdicts.get(criterion)
    if crit is None:
        return (), ()
    out: list[str] = []
    turns: list[int] = []
    for change in crit.history:
        if not out or out[-1] != change.status:
            out.append(change.status)
            turns.append(change.turn)
    return tuple(out), tuple(turns)


def flatten(data: Any, prefix: str = "") -> dict[str, Any]:
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


def _objects(a: EpisodeState, b: EpisodeState) -> list[ObjectDiff]:
    def by_type(state: EpisodeState) -> dict[str, list[Any]]:
        groups: dict[str, list[Any]] = {}
        for obj in sorted(state.objects.values(), key=lambda o: o.first_seq):
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


def diff_states(a: EpisodeState, b: EpisodeState) -> EpisodeDiff:
    """The diff of two whole episodes (each the reducer's final state; tool outputs are not needed)."""
    na, nb = Normaliser(a), Normaliser(b)
    sides_a = [_side(t, na) for t in a.turns if t.index > 0]
    sides_b = [_side(t, nb) for t in b.turns if t.index > 0]
    names = list(dict.fromkeys([*a.verdicts, *b.verdicts]))
    verdicts = []
    for n in names:
        (sa, ta), (sb, tb) = _timeline(a, n), _timeline(b, n)
        verdicts.append(VerdictDiff(n, sa, sb, ta, tb))
    return EpisodeDiff(align(sides_a, sides_b), verdicts, _objects(a, b), (a.score(), b.score()))


__all__ = ["CHANGED", "EpisodeDiff", "FieldDiff", "IGNORED_KEYS", "Normaliser", "ONLY_A", "ONLY_B", "ObjectDiff", "SAME",
           "TurnPair", "TurnSide", "VerdictDiff", "align", "diff_states", "flatten"]
