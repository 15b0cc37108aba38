"""A scorecard (``batch.scorecard``) as ``stripebench scorecard`` prints it: a text table, Markdown, CSV or JSON.

Percentages are whole, rounded half up, as the README prints them; a printed cell that differs from the results is
named, never replaced.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import cast

from stripebench_tui.batch.scorecard import CategoryScore, Scorecard, percent, review_counts, review_sentence, turn_text
from stripebench_tui.core.json_value import JSONValue
from stripebench_tui.core.sanitize import sanitize

FORMATS = ("table", "md", "csv", "json")
TITLES = {"backend": "Backend", "full-stack": "Full-stack", "gym": "Gym"}


def category_json(c: CategoryScore) -> dict[str, JSONValue]:
    """One category × model, the way ``--format json`` writes it."""
    printed: JSONValue = None
    if c.printed is not None:
        printed = {"average": c.printed.average_text, "turn_range": c.printed.turns_text,
                   "agrees": c.printed.average == percent(c.best) and c.printed.turns == c.turn_range}
    return {"category": c.category, "model": c.model, "best_average": percent(c.best),
            "best_average_exact": float(c.best * 100), "turn_range": list(c.turn_range) if c.turn_range else None,
            "mean_average": percent(c.mean), "pass_k": percent(c.pass_k), "tasks": c.tasks, "of_tasks": c.of_tasks,
            "missing": list(c.missing), "printed": printed}


def scorecard_json(card: Scorecard, results: Path, readme: Path | None, runs: int) -> dict[str, JSONValue]:
    return {"results": str(results), "readme": str(readme) if readme else None, "runs": runs,
            "categories": [category_json(c) for c in card.categories],
            "differences": [{"category": d.category, "model": d.model, "column": d.column, "printed": d.printed,
                             "recomputed": d.recomputed} for d in card.differences],
            "not_printed": [{"category": c, "model": m} for c, m in card.not_printed],
            "unmatched": dict(sorted(card.unmatched.items())),
            "review": cast("dict[str, JSONValue]", review_counts(card))}


def notes(card: Scorecard) -> list[str]:
    """The lines under the tables: differences from the README first, then what was partial or left out."""
    out = []
    if card.differences:
        many = len(card.differences) != 1
        out.append(f"{len(card.differences)} printed cell{'s' if many else ''} differ{'' if many else 's'} from the "
                   "results (the README's value kept as printed):")
        out += [f"  ≠ {d}" for d in card.differences]
    for c in card.categories:
        if c.partial:
            out.append(f"partial: {c.category} · {c.model} has {c.tasks} of {c.of_tasks} tasks; missing "
                       + ", ".join(c.missing))
    if card.not_printed:
        out.append("not in the README: " + ", ".join(f"{c} · {m}" for c, m in card.not_printed))
    if card.unmatched:
        out.append("eval names no overlay names (left out): "
                   + ", ".join(f"{n} ({k} runs)" for n, k in sorted(card.unmatched.items())))
    return out + [review_sentence(review_counts(card))]


def _printed_cell(c: CategoryScore) -> str:
    if c.printed is None:
        return "—"
    agrees = c.printed.average == percent(c.best) and c.printed.turns == c.turn_range
    return f"{c.printed.average_text} · {c.printed.turns_text} {'✓' if agrees else '≠'}"


def _row(c: CategoryScore) -> list[str]:
    tasks = str(c.tasks) if not c.partial else f"{c.tasks} of {c.of_tasks}*"
    return [c.model, f"{percent(c.best)}%", turn_text(c.turn_range), f"{percent(c.mean)}%", f"{percent(c.pass_k)}%",
            tasks, _printed_cell(c)]


HEADER = ["model", "best of k", "turns (best)", "mean of k", "pass^k", "tasks", "README"]


def _table(card: Scorecard, head: str) -> str:
    lines = [head]
    for category in dict.fromkeys(c.category for c in card.categories):
        rows = [HEADER] + [_row(c) for c in card.categories if c.category == category]
        widths = [max(len(r[i]) for r in rows) for i in range(len(HEADER))]
        lines += ["", TITLES.get(category, category)]
        for r in rows:
            cells = [r[0].ljust(widths[0])] + [r[i].rjust(widths[i]) for i in range(1, 6)] + [r[6]]
            lines.append("  " + "  ".join(cells).rstrip())
    return "\n".join(lines + [""] + notes(card)) + "\n"


def _markdown(card: Scorecard, head: str) -> str:
    esc = lambda text: text.replace("|", "\\|").replace("*", "\\*")  # names come from the file
    lines = [f"# {head}"]
    for category in dict.fromkeys(c.category for c in card.categories):
        lines += ["", f"## {TITLES.get(category, category)}", "", "| " + " | ".join(HEADER) + " |",
                  "|---|---:|---:|---:|---:|---:|---|"]
        lines += ["| " + " | ".join(esc(cell) for cell in _row(c)) + " |"
                  for c in card.categories if c.category == category]
    return "\n".join(lines + [""] + [f"- {n.strip()}" for n in notes(card)]) + "\n"


def _csv(card: Scorecard) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["category", "model", "best_average", "turn_min", "turn_max", "mean_average", "pass_k", "tasks",
                     "of_tasks", "printed_average", "printed_turn_range", "agrees"])
    for c in card.categories:
        low, high = c.turn_range or ("", "")
        agrees = "" if c.printed is None else str(c.printed.average == percent(c.best)
                                                   and c.printed.turns == c.turn_range).lower()
        writer.writerow([c.category, c.model, percent(c.best), low, high, percent(c.mean), percent(c.pass_k), c.tasks,
                         c.of_tasks, c.printed.average_text if c.printed else "",
                         c.printed.turns_text if c.printed else "", agrees])
    return out.getvalue()


def render_scorecard(card: Scorecard, fmt: str, results: Path, readme: Path | None, runs: int) -> str:
    """The scorecard in ``fmt`` (one of FORMATS)."""
    if fmt == "json":
        return json.dumps(scorecard_json(card, results, readme, runs), indent=2) + "\n"
    if fmt == "csv":
        return _csv(card)
    models = len({c.model for c in card.categories})
    head = (f"Scorecard of {results.name}: {runs} runs, {models} models, best of k"
            + (f"; every printed cell of {readme} checked" if readme else "; no README to check against"))
    text = _markdown(card, head) if fmt == "md" else _table(card, head)
    return sanitize(text, max_line=None) if fmt == "table" else text


__all__ = ["FORMATS", "category_json", "notes", "render_scorecard", "scorecard_json"]
