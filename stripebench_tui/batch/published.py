"""A sweep beside the published benchmark's results (``stripebench batch report DIR --compare results.csv``).

The published results are a CSV with the columns ``eval name, model, run ID, score, turn count`` (one row per run).
Each eval name is matched to our environment id through the overlays we ship for the published folders
(``environments/published/*.toml``: ``eval_name``, default the folder's name; ``{problem}`` in it stands for a
problem sub-folder, so ``ruby-charges-on-payment-intent`` is ``sdk-upgrades-ruby``'s problem
``charges-on-payment-intent``). The published models then get the same per-task and per-category numbers as the
sweep's agents: best of k, mean, runs.
"""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from stripebench_tui.batch.printed_tables import printed_rows
from stripebench_tui.batch.scorecard import (
    NOT_VALID,
    Scorecard,
    ScoredRun,
    TaskUnit,
    category_key,
    category_row,
    review_counts,
    score_runs,
)
from stripebench_tui.core.regular_file import read_capped
from stripebench_tui.core.review import VERDICTS
from stripebench_tui.envs.bench_overlay import Overlay, published_dir
from stripebench_tui.envs.benchfolder import env_id
from stripebench_tui.envs.manifest import MANIFEST, environments_dir, load_manifest_environment
from stripebench_tui.errors import BadFileError

# The published header, and ours (``batch report --format csv``) which starts with the same five columns.
# A ``verdict`` column (ours: the run review, ``batch.review``) is read when present.
COLUMNS = {"eval name": "eval", "model": "model", "run id": "run", "score": "score", "turn count": "turns",
           "eval_name": "eval", "run_id": "run", "turn_count": "turns", "verdict": "verdict"}
REQUIRED = ("eval", "model", "run", "score", "turns")
MAX_RESULTS_BYTES = 64 << 20  # the published results are some thousand rows: tens of kilobytes


@dataclass
class PublishedRun:
    eval_name: str
    model: str
    run: str
    score: float
    turns: int
    verdict: str | None = None  # the run review's verdict, when the file has the column and the run was reviewed


@dataclass
class Results:
    path: Path
    runs: list[PublishedRun] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "line N: why", one per row left out
    ignored_columns: list[str] = field(default_factory=list)


def read_results(path: Path, strict: bool = False) -> Results:
    """The rows of a results CSV; BadFileError (one line) when it cannot be read or lacks a column, a counted skip
    for each row that cannot be used (with ``strict``, BadFileError naming the first such row)."""
    try:  # a FIFO or /dev/zero is refused, not read until memory runs out
        text = read_capped(path, MAX_RESULTS_BYTES).decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadFileError(f"{path}: cannot read the results file ({getattr(exc, 'strerror', None) or exc})") from None
    rows = _rows(text)
    _, header, problem = next(rows, (1, None, ""))
    if problem:
        raise BadFileError(f"{path}:1: the header is not CSV ({problem})")
    if not header:
        raise BadFileError(f"{path}: empty; a results file starts with: eval name,model,run ID,score,turn count")
    names = [COLUMNS.get(h.strip().lower()) for h in header]
    missing = [c for c in REQUIRED if c not in names]
    if missing:
        raise BadFileError(f"{path}: no column for {', '.join(missing)}; a results file starts with: "
                           "eval name,model,run ID,score,turn count")
    out = Results(path, ignored_columns=[h for h, n in zip(header, names, strict=True) if n is None])
    where = {n: i for i, n in enumerate(names) if n is not None}
    for line, row, problem in rows:
        if row is None:
            out.skipped.append(f"line {line}: {problem}")
            continue
        if not any(cell.strip() for cell in row):
            continue
        fault = _row_problem(row, len(header), where)
        if fault is not None:
            if strict:
                raise BadFileError(f"{path}: line {line}: {fault}")
            out.skipped.append(f"line {line}: {fault}")
            continue
        verdict = row[where["verdict"]].strip() if "verdict" in where else ""
        out.runs.append(PublishedRun(row[where["eval"]].strip(), row[where["model"]].strip(),
                                     row[where["run"]].strip(), float(row[where["score"]]), int(row[where["turns"]]),
                                     verdict or None))
    return out


def _row_problem(row: list[str], width: int, where: dict[str, int]) -> str | None:
    """Why a results row cannot be used, or None."""
    if len(row) < width:
        return f"{len(row)} fields where the header has {width}"
    try:
        score, turns = float(row[where["score"]]), int(row[where["turns"]])
    except ValueError:
        return f"score {row[where['score']]!r} or turn count {row[where['turns']]!r} is not a number"
    if not 0.0 <= score <= 1.0:
        return f"score {score} is outside 0..1"
    if turns < 0:
        return f"turn count {turns} is negative"
    if not row[where["eval"]].strip() or not row[where["model"]].strip():
        return "no eval name or no model"
    verdict = row[where["verdict"]].strip() if "verdict" in where else ""
    if verdict and verdict not in VERDICTS:
        return f"verdict {verdict!r} is not one of {', '.join(VERDICTS)}"
    return None


# (pattern of eval names, folder name, overlay) for each overlay we ship
Target = tuple[re.Pattern[str], str, Overlay]


def _rows(text: str) -> Iterator[tuple[int, list[str] | None, str]]:
    """(line, row, "") for each row of the CSV ``text``; (line, None, why) for a row the csv module refuses (a field
    over its size limit, a stray quote), after which the next rows are still read. A quoted cell may hold a line
    break (so the text is not split into lines first)."""
    reader = csv.reader(io.StringIO(text, newline=""))
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            yield reader.line_num, None, str(exc)
            continue
        yield reader.line_num, row, ""


@dataclass(frozen=True)
class EvalTarget:
    env: str  # our environment id
    category: str | None


def eval_targets(overlays: Path | None = None) -> list[Target]:
    """(pattern of eval names, folder name, overlay) for every overlay we ship."""
    out = []
    for path in sorted((overlays or published_dir()).glob("*.toml")):
        overlay = Overlay.load(path)
        name = overlay.eval_name or path.stem
        parts = [re.escape(p) for p in name.split("{problem}")]
        pattern = re.compile("(?P<problem>.+)".join(parts) if len(parts) > 1 else parts[0])
        out.append((pattern, path.stem, overlay))
    return out


def eval_name_of(env: str, targets: list[Target]) -> str:
    """The name the published results give our environment ``env`` (its overlay's ``eval_name``), else ``env``."""
    for _pattern, folder, overlay in targets:
        name, ident = overlay.eval_name or folder, env_id(Path(folder), None)
        if "{problem}" not in name and env == ident:
            return name
        if "{problem}" in name and env.startswith(ident + "-"):
            return name.replace("{problem}", env[len(ident) + 1:])
    return env


def _overlay_match(name: str, targets: list[Target]) -> tuple[str, str | None, str | None] | None:
    """(folder, problem, category) of the first overlay whose eval name matches ``name``; None when none does."""
    for pattern, folder, overlay in targets:
        found = pattern.fullmatch(name)
        if found is not None:
            problem = found.groupdict().get("problem")
            return folder, problem, overlay.problem(problem).get("category") or overlay.category
    return None


def match_eval(name: str, targets: list[Target],
               known_envs: set[str]) -> EvalTarget | None:
    """Our environment for a published eval name: through an overlay's ``eval_name``, else an id we know."""
    found = _overlay_match(name, targets)
    if found is not None:
        folder, problem, category = found
        return EvalTarget(env_id(Path(folder), problem), category)
    return EvalTarget(name, None) if name in known_envs else None


def task_unit(name: str, targets: list[Target]) -> TaskUnit | None:
    """The task and category a published eval name counts toward, through the overlays: a problem of a folder with
    several (``ruby-charges-on-payment-intent``) counts toward the folder's task (``sdk-upgrades-ruby``), as the
    README coalesces each language's SDK-upgrade problems; None when no overlay names it or none gives a category."""
    found = _overlay_match(name, targets)
    if found is None or found[2] is None:
        return None
    return TaskUnit(env_id(Path(found[0]), None), found[2])


def _our_task(name: str) -> TaskUnit | None:
    """An environment of ours named ``name`` as a task of its manifest's category (our sweeps' CSVs name them so)."""
    root = environments_dir() / name
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", name) or not (root / MANIFEST).is_file():
        return None
    return TaskUnit(name, load_manifest_environment(root).manifest.category)


def scored_runs(results: Results) -> list[ScoredRun]:
    """The results' runs with exact scores (the CSV's decimal text as a fraction, so no binary rounding decides a
    half when the scorecard rounds)."""
    return [ScoredRun(r.eval_name, r.model, r.run, Fraction(repr(r.score)), r.turns, r.verdict) for r in results.runs]


def published_scorecard(path: Path, readme: Path | None = None,
                        overlays: Path | None = None) -> tuple[Scorecard, Results]:
    """The scorecard of the results CSV at ``path`` (a bad row is a BadFileError naming it), its eval names mapped
    through the overlays, checked against the tables printed in ``readme`` when given."""
    results = read_results(path, strict=True)
    targets = eval_targets(overlays)
    units = {name: unit for name in {r.eval_name for r in results.runs}
             if (unit := task_unit(name, targets) or _our_task(name)) is not None}
    printed = []
    if readme is not None:
        try:
            printed = printed_rows(read_capped(readme, MAX_RESULTS_BYTES).decode("utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise BadFileError(f"{readme}: cannot read ({getattr(exc, 'strerror', None) or exc})") from None
        if not printed:
            raise BadFileError(f"{readme}: no score table under a Backend, Full-stack or Gym heading")
    return score_runs(scored_runs(results), units, printed), results


def compare(report: dict[str, Any], results: Results, overlays: Path | None = None) -> dict[str, Any]:
    """The published models' numbers in the sweep's terms and by the published rule (``batch.scorecard``), task by
    task and category by category: for a category the sweep covers only in part, their figure over the same tasks
    beside their figure over the whole category."""
    sweep_envs = {r["env"]: r["category"] for r in report["runs"]}
    targets = eval_targets(overlays)
    names = Counter(r.eval_name for r in results.runs)
    found = {name: match_eval(name, targets, set(sweep_envs)) for name in names}
    matched = {name: target for name, target in found.items() if target is not None}
    unmatched = {name: names[name] for name, target in found.items() if target is None}
    units: dict[str, TaskUnit] = {}
    for name, target in matched.items():
        unit = task_unit(name, targets)
        category = sweep_envs.get(target.env) or (unit.category if unit else target.category)
        if category:
            units[name] = TaskUnit(unit.task if unit else target.env, category)
    scored = [r for r in scored_runs(results) if r.eval_name in units]
    whole = score_runs(scored, units)
    swept = {name for name, target in matched.items() if target.env in sweep_envs}
    same = score_runs([r for r in scored if r.eval_name in swept], units)
    tasks = []
    for problem in sorted(whole.problems, key=lambda p: (p.eval_name, p.model)):
        target = matched[problem.eval_name]
        mine = [r for r in scored if r.eval_name == problem.eval_name and r.model == problem.model]
        best = problem.best.score if problem.best else Fraction(0)
        best_turns = [r.turns for r in mine if r.score == best and r.verdict not in NOT_VALID + ("infra-failure",)]
        tasks.append({"eval_name": problem.eval_name, "env": target.env, "in_sweep": target.env in sweep_envs,
                      "category": problem.category, "model": problem.model, "runs": problem.runs,
                      "best": float(best), "mean": float(problem.mean),
                      "best_turns": [min(best_turns), max(best_turns)] if best_turns else None})
    whole_at = {(c.category, c.model): c for c in whole.categories}
    same_at = {(c.category, c.model): c for c in same.categories}
    categories = []
    for category in sorted({r["category"] for r in report["runs"]}, key=category_key):
        published = {name for name, unit in units.items() if unit.category == category}
        covers_all = published <= swept
        for model in dict.fromkeys(c.model for c in whole.categories if c.category == category):
            ours, everything = same_at.get((category, model)), whole_at.get((category, model))
            if ours is not None:
                of_tasks = everything.of_tasks if everything else ours.of_tasks
                categories.append({**category_row(ours), "of_tasks": of_tasks,
                                   "scope": "all" if covers_all else "same tasks"})
            if everything is not None and not covers_all:
                categories.append({**category_row(everything), "scope": "whole category"})
    return {"results": str(results.path), "runs": len(results.runs), "skipped": results.skipped,
            "ignored_columns": results.ignored_columns, "tasks": tasks, "categories": categories,
            "review": review_counts(whole),
            "unmatched": [{"eval_name": n, "runs": k} for n, k in sorted(unmatched.items())],
            "not_in_sweep": sorted({t["eval_name"] for t in tasks if not t["in_sweep"]})}


def _source(c: dict[str, Any]) -> str:
    """How a published category row is labelled: over every task, over the sweep's, or over the whole category."""
    if c["scope"] == "same tasks":
        return f"published, same {c['tasks']} of {c['of_tasks']} tasks as this sweep"
    if c["scope"] == "whole category":
        return f"published, whole category ({c['tasks']} of {c['of_tasks']} tasks)"
    return "published"


def comparison_tables(report: dict[str, Any]) -> dict[str, Any]:
    """What a report shows beside the published results (``report["compare"]``), for its Markdown and its HTML
    alike: per task this sweep's agents then the published models, per category both, and notes on the rest."""
    cmp = report["compare"]
    published = [t for t in cmp["tasks"] if t["in_sweep"]]
    tasks = []
    for env in sorted({t["env"] for t in report["tasks"]}):
        rows = [(t, "this sweep") for t in report["tasks"] if t["env"] == env]
        rows += [(t, f"published ({t['eval_name']})") for t in published if t["env"] == env]
        tasks += [{"env": env, "model": t["model"], "source": source, "runs": t["runs"], "best": t["best"],
                   "mean": t["mean"], "best_turns": t["best_turns"]} for t, source in rows]
    sources = [(c, "this sweep") for c in report["categories"]] + [(c, _source(c)) for c in cmp["categories"]]
    order = {"this sweep": 0, "all": 1, "same tasks": 1, "whole category": 2}
    sources.sort(key=lambda cs: (category_key(cs[0]["category"]), 0 if cs[1] == "this sweep" else 1,
                                 order[cs[0].get("scope", "this sweep")], cs[0]["model"]))
    categories = [{"category": c["category"], "model": c["model"], "source": source, "tasks": c["tasks"],
                   # a row over the sweep's tasks is whole on its own terms (its label says of how many)
                   "of_tasks": c["tasks"] if c.get("scope") == "same tasks" else c["of_tasks"],
                   "best_of_k": c["best_of_k"], "best_percent": c["best_percent"],
                   "best_turns": c["best_turns"], "mean_percent": c["mean_percent"],
                   "pass_k_percent": c["pass_k_percent"]} for c, source in sources]
    notes = []
    if cmp["unmatched"]:
        notes.append("No environment matches these published eval names (no overlay names them): "
                     + ", ".join(f"{u['eval_name']} ({u['runs']} runs)" for u in cmp["unmatched"]) + ".")
    if cmp["not_in_sweep"]:
        notes.append("Published, but not in this sweep: " + ", ".join(cmp["not_in_sweep"]) + ".")
    if cmp["skipped"]:
        notes.append(f"{len(cmp['skipped'])} rows of the results file left out: "
                     + "; ".join(cmp["skipped"][:5]) + ("…" if len(cmp["skipped"]) > 5 else "") + ".")
    if cmp["ignored_columns"]:
        notes.append("Columns not used: " + ", ".join(cmp["ignored_columns"]) + ".")
    return {"results": cmp["results"], "runs": cmp["runs"], "tasks": tasks, "categories": categories, "notes": notes}


__all__ = ["PublishedRun", "Results", "compare", "comparison_tables", "eval_name_of", "eval_targets", "match_eval",
           "published_scorecard", "read_results", "scored_runs", "task_unit"]
