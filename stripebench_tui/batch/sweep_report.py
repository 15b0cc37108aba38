"""``stripebench batch report``: the published benchmark's table, computed from the episodes' traces.

Per task (environment × agent) the best of k runs and their mean, the turn range of the best runs, tokens
and cost; per category the average of the best-of-k; which criteria fail most across runs; the failure modes the
findings show (``batch.insight``); and one CSV row per run that starts with the published columns (eval name,
model, run id, score, turn count). The schemas are in docs/batch.md.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from stripebench_tui.batch.insight import insight
from stripebench_tui.batch.manifest import Batch
from stripebench_tui.batch.published import (
    Target,
    compare,
    comparison_tables,
    eval_name_of,
    eval_targets,
    read_results,
    task_unit,
)
from stripebench_tui.batch.scorecard import (
    NOT_VALID,
    Scorecard,
    ScoredRun,
    TaskUnit,
    category_row,
    review_counts,
    review_sentence,
    score_runs,
)
from stripebench_tui.core.escape import csv_cell, markdown_text
from stripebench_tui.core.review import load_review
from stripebench_tui.core.trace import Trace
from stripebench_tui.errors import UserError
from stripebench_tui.findings.runner import detect
from stripebench_tui.formats.open import open_episode

# The published benchmark's five columns first, then ours (the run review's verdict first: `stripebench scorecard`
# reads it).
CSV_COLUMNS = ("eval_name", "model", "run_id", "score", "turn_count", "verdict", "passed", "seconds", "tokens", "cost_usd",
               "findings", "failed_criteria")
FORMATS = ("md", "csv", "json")


@dataclass
class ReportedEpisode:
    """What the report needs of one episode, read from its trace."""

    score: float | None
    passed: bool | None
    reason: str
    turns: int
    tokens: int
    cost_usd: float
    failed_criteria: list[str] = field(default_factory=list)
    seconds: float = 0.0
    findings: list[tuple[str, int]] = field(default_factory=list)  # (detector, turn), recorded or derived on open


def read_episode(episode_dir: Path) -> ReportedEpisode | None:
    """The summary of the trace in ``episode_dir``; None when there is no readable trace."""
    path = episode_dir / "trace.jsonl"
    if not path.is_file():
        return None
    try:
        trace = open_episode(path)
        state = trace.state_at(None)
        findings = [(f.detector, f.turn) for f in state.findings] or _derived_findings(trace)
    except (UserError, OSError, ValueError):  # a trace cut short by a kill is still read; garbage is not
        return None
    end = state.ended
    return ReportedEpisode(
        seconds=end.t if end is not None else 0.0, findings=findings,
        score=end.score if end is not None else None, passed=end.passed if end is not None else None,
        reason=end.reason if end is not None else "unfinished",
        turns=sum(1 for t in state.turns if t.index >= 1),
        tokens=state.totals.tokens_in + state.totals.tokens_out, cost_usd=state.totals.cost_usd,
        failed_criteria=sorted(c for c, v in state.verdicts.items() if v.status not in ("pass", "pending")))


def _derived_findings(trace: Trace) -> list[tuple[str, int]]:
    """What the detectors find in a trace that recorded no findings (one more pass over it)."""
    return [(f.detector, f.turn) for f in detect(trace.iter_events(), header=trace.header)]


def _task(task: dict[str, Any]) -> str:
    """A task as the tables name it: our id, and the published results' name when that differs."""
    return task["env"] if task["eval_name"] == task["env"] else f"{task['env']} ({task['eval_name']})"


def build_report(batch: Batch) -> dict[str, Any]:
    """Every number of the report, from the traces of the batch's finished cells and their reviews (``stripebench
    review``): tasks and categories by the published scorecard's rule (``batch.scorecard``)."""
    runs: list[dict[str, Any]] = []
    targets = eval_targets()
    for cell in batch.cells:
        result = batch.result(cell)
        summary = read_episode(batch.episode_dir(cell)) if batch.finished(cell) else None
        if summary is None:
            continue
        review = load_review(batch.episode_dir(cell))
        runs.append({"cell": cell.id, "env": cell.env, "eval_name": eval_name_of(cell.env, targets),
                     "category": cell.category, "model": cell.agent_label,
                     "run": cell.run, "seed": cell.seed, "score": summary.score if summary.score is not None else 0.0,
                     "scored": summary.score is not None, "turns": summary.turns, "tokens": summary.tokens,
                     "cost_usd": summary.cost_usd, "reason": summary.reason, "failed": summary.failed_criteria,
                     "attempts": (result or {}).get("attempts", 1), "passed": summary.passed is True,
                     "seconds": round(summary.seconds, 3),
                     "findings": [{"kind": k, "turn": t} for k, t in summary.findings],
                     "verdict": review.verdict if review else None, "review_note": review.note if review else "",
                     "reviewer": review.reviewer if review else "", "reviewed_at": review.at if review else ""})
    card = sweep_scorecard(runs, targets)
    tasks: list[dict[str, Any]] = []
    keys = sorted({(r["env"], r["model"]) for r in runs}, key=lambda k: (k[1], k[0]))
    problems = {(p.eval_name, p.model): p for p in card.problems}
    for env, model in keys:
        mine = [r for r in runs if r["env"] == env and r["model"] == model]
        problem = problems.get((env, model))
        if problem is None:  # every run of it was an infrastructure failure
            continue
        counted = [r for r in mine if r["verdict"] != "infra-failure"]
        best = float(problem.best.score) if problem.best else 0.0
        best_turns = [r["turns"] for r in counted if r["score"] == best and r["verdict"] not in NOT_VALID]
        tasks.append({"env": env, "eval_name": mine[0]["eval_name"], "category": mine[0]["category"], "model": model,
                      "runs": len(counted), "left_out": len(mine) - len(counted), "best": best,
                      "best_run": problem.best.run if problem.best else None,
                      "best_verdict": problem.best.verdict if problem.best else None,
                      "mean": float(problem.mean), "best_turns": [min(best_turns), max(best_turns)] if best_turns else None,
                      "tokens": sum(r["tokens"] for r in mine), "cost_usd": sum(r["cost_usd"] for r in mine)})
    categories = sorted((category_row(c) for c in card.categories), key=lambda c: (c["model"], c["category"]))
    failures: dict[tuple[str, str], list[str]] = {}
    for r in runs:
        for criterion in r["failed"]:
            failures.setdefault((r["env"], criterion), []).append(r["cell"])
    totals = {env: sum(1 for r in runs if r["env"] == env) for env in {r["env"] for r in runs}}
    criteria = [{"env": env, "criterion": c, "failed": len(cells), "runs": totals[env], "cells": cells}
                for (env, c), cells in sorted(failures.items(), key=lambda kv: (-len(kv[1]), kv[0]))]
    return {"batch": str(batch.root), "cells": len(batch.cells), "finished": len(runs),
            "retried": sum(1 for r in runs if r["attempts"] > 1), "runs": runs, "tasks": tasks,
            "categories": categories, "criteria": criteria, "review": review_counts(card), **insight(runs)}


def sweep_scorecard(runs: list[dict[str, Any]], targets: list[Target]) -> Scorecard:
    """The sweep's runs by the published rule: each environment is a problem, counting toward the published task its
    eval name maps to (an SDK-upgrade problem toward its language's task), else a task of its own."""
    units = {}
    for r in runs:
        unit = task_unit(r["eval_name"], targets)
        units[r["env"]] = TaskUnit(unit.task if unit else r["env"], r["category"])
    return score_runs([ScoredRun(r["env"], r["model"], r["cell"], Fraction(repr(float(r["score"]))), r["turns"],
                                 r["verdict"]) for r in runs], units)


def _pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def turn_range(pair: list[int] | None) -> str:
    """A turn range as the tables show it (``12`` or ``9–14``; ``—`` when no run stands)."""
    if not pair:
        return "—"
    return str(pair[0]) if pair[0] == pair[1] else f"{pair[0]}–{pair[1]}"


def tasks_text(c: dict[str, Any]) -> str:
    """A category row's tasks (``3``, or ``2 of 5*`` when some of the category's tasks have no runs of it)."""
    return str(c["tasks"]) if c["tasks"] >= c["of_tasks"] else f"{c['tasks']} of {c['of_tasks']}*"


def render(report: dict[str, Any], fmt: str) -> str:
    """The report as Markdown tables, the per-run CSV, or JSON."""
    if fmt == "json":
        return json.dumps(report, indent=2, sort_keys=True) + "\n"
    if fmt == "csv":
        out = io.StringIO()
        # CRLF, as RFC 4180 has it: the csv module then quotes a cell holding a carriage return, which a bare
        # "\n" terminator leaves unquoted for a spreadsheet to read as a row break.
        writer = csv.writer(out, lineterminator="\r\n")
        writer.writerow(CSV_COLUMNS)
        for r in report["runs"]:  # names come from folders, flags, models and graders: every text cell is neutralised
            writer.writerow([csv_cell(r["eval_name"]), csv_cell(r["model"]), r["run"], f"{r['score']:.4f}", r["turns"],
                             r["verdict"] or "",
                             "true" if r["passed"] else "false", f"{r['seconds']:.1f}", r["tokens"],
                             f"{r['cost_usd']:.4f}",
                             csv_cell(";".join(f"{f['kind']}@{f['turn']}" for f in r["findings"])),
                             csv_cell(";".join(r["failed"]))])
        return out.getvalue()
    clean = markdown_text  # names come from folders, flags, models and graders' tests
    lines = [f"# Batch {clean(report['batch'])}", "",
             f"{report['finished']} of {report['cells']} episodes finished"
             + (f", {report['retried']} after an infrastructure retry" if report["retried"] else "") + ".", "",
             "## Per task", "", "| task | category | model | runs | best of k | mean | turns (best) | tokens | cost |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|"]
    lines += [f"| {clean(_task(t))} | {clean(t['category'])} | {clean(t['model'])} | {t['runs']} | {_pct(t['best'])} | "
              f"{_pct(t['mean'])} | {turn_range(t['best_turns'])} | {t['tokens']:,} | ${t['cost_usd']:.2f} |"
              for t in report["tasks"]]
    lines += ["", "## Per category (the published scorecard's rule: best of k, each language's SDK-upgrade problems as "
              "one task, half-up)", "", "| category | model | tasks | best of k | turns (best) | mean of k | pass^k |",
              "|---|---|---:|---:|---:|---:|---:|"]
    lines += [f"| {clean(c['category'])} | {clean(c['model'])} | {tasks_text(c)} | {c['best_percent']} % | "
              f"{turn_range(c['best_turns'])} | {c['mean_percent']} % | {c['pass_k_percent']} % |"
              for c in report["categories"]]
    if any(c["tasks"] < c["of_tasks"] for c in report["categories"]):
        lines += ["", "\\* partial: " + "; ".join(f"{clean(c['model'])} lacks {clean(', '.join(c['missing']))} in "
                                                   f"{clean(c['category'])}" for c in report["categories"] if c["missing"])]
    lines += ["", review_sentence(report["review"])]
    lines += ["", "## Failing criteria (across runs)", ""]
    if report["criteria"]:
        lines += ["| task | criterion | failed | of runs |", "|---|---|---:|---:|"]
        lines += [f"| {clean(c['env'])} | {clean(c['criterion'])} | {c['failed']} | {c['runs']} |" for c in report["criteria"]]
    else:
        lines.append("No criterion failed.")
    lines += ["", "## Failure modes (findings: runs where each fired, median turn it first fired)", ""]
    if report["failure_modes"]:
        lines += ["| finding | model | task | fired | of runs | share | median turn |", "|---|---|---|---:|---:|---:|---:|"]
        lines += [f"| {clean(m['finding'])} | {clean(m['model'])} | {clean(m['env'])} | {m['fired']} | {m['runs']} | "
                  f"{_pct(m['share'])} | {m['median_turn']:g} |" for m in report["failure_modes"]]
        lines += ["", "## Findings beside failures", "", "| finding | runs | failed | passed | criteria failing beside it |",
                  "|---|---:|---:|---:|---|"]
        lines += [f"| {clean(w['finding'])} | {w['runs']} | {w['failed_runs']} | {w['passed_runs']} | "
                  + (", ".join(f"{clean(c['criterion'])} ({c['runs']})" for c in w["criteria"][:5]) or "—") + " |"
                  for w in report["with_failures"]]
    else:
        lines.append("No finding fired.")
    lines += ["", "## Per agent (median / p90 over runs)", "", "| model | runs | turns | seconds | tokens | cost |",
              "|---|---:|---:|---:|---:|---:|"]
    lines += [f"| {clean(d['model'])} | {d['runs']} | {d['turns']['median']:g} / {d['turns']['p90']:g} | "
              f"{d['seconds']['median']:.1f} / {d['seconds']['p90']:.1f} | {d['tokens']['median']:,.0f} / "
              f"{d['tokens']['p90']:,.0f} | ${d['cost_usd']['median']:.2f} / ${d['cost_usd']['p90']:.2f} |"
              for d in report["distributions"]]
    if "compare" in report:
        lines += _compare_lines(report, clean)
    return "\n".join(lines) + "\n"


def _compare_lines(report: dict[str, Any], clean: Callable[[Any], str]) -> list[str]:
    """The sweep's agents and the published models in the same tables (``--compare``)."""
    tables = comparison_tables(report)
    lines = ["", f"## Beside the published results ({clean(tables['results'])}: {tables['runs']} runs)", "",
             "| task | model | source | runs | best of k | mean | turns (best) |", "|---|---|---|---:|---:|---:|---:|"]
    lines += [f"| {clean(t['env'])} | {clean(t['model'])} | {clean(t['source'])} | {t['runs']} | {_pct(t['best'])} | "
              f"{_pct(t['mean'])} | {turn_range(t['best_turns'])} |" for t in tables["tasks"]]
    lines += ["", "| category | model | source | tasks | best of k | turns (best) | mean of k | pass^k |",
              "|---|---|---|---:|---:|---:|---:|---:|"]
    lines += [f"| {clean(c['category'])} | {clean(c['model'])} | {clean(c['source'])} | {tasks_text(c)} | "
              f"{c['best_percent']} % | {turn_range(c['best_turns'])} | {c['mean_percent']} % | {c['pass_k_percent']} % |"
              for c in tables["categories"]]
    notes = [clean(note) for note in tables["notes"]]
    return lines + ([""] + notes if notes else [])


def with_comparison(batch: Batch, compare_with: Path | None = None) -> dict[str, Any]:
    """The batch's report, beside the published results in ``compare_with`` when given (``report["compare"]``)."""
    report = build_report(batch)
    if compare_with is not None:
        report["compare"] = compare(report, read_results(compare_with))
    return report


def write_report(batch: Batch, fmt: str, compare_with: Path | None = None,
                 output: Path | None = None) -> tuple[str, Path]:
    """Render the report (beside the published results in ``compare_with``, if given) and write it to ``output``
    (default ``DIR/report.<fmt>``); returns the text and the file."""
    report = with_comparison(batch, compare_with)
    text = render(report, fmt)
    path = output or batch.root / f"report.{fmt}"
    path.write_text(text, encoding="utf-8")
    return text, path


__all__ = ["CSV_COLUMNS", "FORMATS", "ReportedEpisode", "build_report", "read_episode", "render", "turn_range",
           "with_comparison", "write_report"]
