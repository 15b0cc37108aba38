"""``stripebench diff``'s text: the aligned turns, the first divergence, verdicts and objects that differ."""

from __future__ import annotations

import json
from typing import TextIO

from stripebench_tui.core.episode_diff import CHANGED, ONLY_A, ONLY_B, SAME, EpisodeDiff, TurnPair, TurnSide
from stripebench_tui.core.json_value import JSONValue
from stripebench_tui.core.sanitize import sanitize

_MARK = {SAME: "=", CHANGED: "~", ONLY_A: "<", ONLY_B: ">"}
COLUMN = 44
CONTEXT = 1  # same turns shown around each difference when not printing all


def side_text(side: TurnSide | None, width: int = COLUMN) -> str:
    """``12 shell, view_file`` (failed calls marked ``!``), cut to ``width``."""
    if side is None:
        return "—".ljust(width)
    tools = ", ".join(tool + ("!" if status in ("failed", "rejected") else "") for tool, _, status in side.calls)
    text = f"{side.turn:>3} {tools or '(' + (side.text[:30] or 'no calls') + ')'}"
    text = sanitize(text)
    return (text[: width - 1] + "…" if len(text) > width else text).ljust(width)


def pair_line(pair: TurnPair, first: bool) -> str:
    return f"{'▶' if first else ' '}{_MARK[pair.kind]} {side_text(pair.a)} {side_text(pair.b).rstrip()}"


def _value(v: JSONValue) -> str:
    text = json.dumps(v, ensure_ascii=False) if not isinstance(v, str) else repr(v)
    return sanitize(text if len(text) <= 60 else text[:59] + "…")


def _score(s: float | None) -> str:
    return "unscored" if s is None else f"{s:.2f}"


def write_diff(diff: EpisodeDiff, out: TextIO, labels: tuple[str, str] = ("A", "B"), show_all: bool = False) -> None:
    """Print ``diff`` as plain text (one screen for a typical pair; ``show_all`` lists every turn)."""
    counts = {k: sum(1 for p in diff.pairs if p.kind == k) for k in (SAME, CHANGED, ONLY_A, ONLY_B)}
    out.write(f"A: {sanitize(labels[0])}\nB: {sanitize(labels[1])}\n\n")
    out.write(f"Turns, aligned by tool calls: {counts[SAME]} same, {counts[CHANGED]} changed, "
              f"{counts[ONLY_A]} only in A, {counts[ONLY_B]} only in B\n")
    first = diff.first_divergence
    if first is None:
        out.write("No divergence: both episodes made the same tool calls with the same outcomes.\n")
    else:
        p = diff.pairs[first]
        where = " / ".join(f"{n} turn {s.turn}" if s else f"{n} —" for n, s in (("A", p.a), ("B", p.b)))
        out.write(f"First divergence: {where} ({p.kind.replace('_', ' ')})\n")
        if p.kind == CHANGED and p.a and p.b:
            for (ta, aa, sa), (tb, ab, sb) in zip(p.a.calls, p.b.calls, strict=False):
                if (ta, aa, sa) != (tb, ab, sb):
                    out.write(f"  A: {sanitize(ta)} {sa} {_value(aa)}\n  B: {sanitize(tb)} {sb} {_value(ab)}\n")
                    break
    out.write(f"\n  {'A'.ljust(COLUMN + 1)} B\n")
    shown = set(range(len(diff.pairs))) if show_all else {
        j for i, p in enumerate(diff.pairs) if p.kind != SAME for j in range(i - CONTEXT, i + CONTEXT + 1)}
    skipped = 0
    for i, pair in enumerate(diff.pairs):
        if i not in shown:
            skipped += 1
            continue
        if skipped:
            out.write(f"   … {skipped} same turn{'s' if skipped != 1 else ''}\n")
            skipped = 0
        out.write(pair_line(pair, i == first) + "\n")
    if skipped:
        out.write(f"   … {skipped} same turn{'s' if skipped != 1 else ''}\n")
    differing = [v for v in diff.verdicts if not v.same]
    out.write(f"\nVerdicts: {len(differing)} of {len(diff.verdicts)} criteria differ\n")
    for v in differing:
        out.write(f"  {sanitize(v.criterion)}: A {v.timeline('a')} · B {v.timeline('b')}\n")
    out.write(f"\nStripe objects: {len(diff.objects)} differ (ids and timestamps left out)\n")
    for o in diff.objects:
        name = f"{sanitize(o.object_type)} #{o.ordinal}"
        if o.missing:
            present = o.a_id or o.b_id
            out.write(f"  {name}: only in {'A' if o.missing == 'b' else 'B'} ({sanitize(present)})\n")
            continue
        out.write(f"  {name} ({sanitize(o.a_id)} / {sanitize(o.b_id)}): {len(o.fields)} field(s)\n")
        for f in o.fields[:8]:
            out.write(f"    {sanitize(f.path)}: A {_value(f.a)} · B {_value(f.b)}\n")
        if len(o.fields) > 8:
            out.write(f"    … {len(o.fields) - 8} more\n")
    a, b = diff.score
    out.write(f"\nScore: A {_score(a)} · B {_score(b)}\n")
    out.write("Equivalent.\n" if diff.equivalent else "Not equivalent.\n")


__all__ = ["pair_line", "side_text", "write_diff"]
