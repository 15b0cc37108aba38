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
from dataclasses import dataclass, field
from pathlib import Path
from statistics import mean
from typing import Any, Iterator

from stripebench_tui.core.regular_file import open_regular
from stripebench_tui.envs.bench_overlay import Overlay, published_dir
from stripebench_tui.envs.benchfolder import env_id
from stripebench_tui.errors import BadFileError

# The published header, and ours (``batch report --format csv``) which starts with the same five columns.
COLUMNS = {"eval name": "eval", "model": "model", "run id": "run", "score": "score", "turn count": "turns",
           "eval_name": "eval", "run_id": "run", "turn_count": "turns"}
REQUIRED = ("eval", "model", "run", "score", "turns")
MAX_RESULTS_BYTES = 64 << 20  # the published results are some thousand rows: tens of kilobytes


@dataclass
class PublishedRun:
    eval_name: str
    model: str
    run: str
    score: float
    turns: int


@dataclass
class Results:
    path: Path
    runs: list[PublishedRun] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "line N: why", one per row left out
    ignored_columns: list[str] = field(default_factory=list)


def read_results(path: Path) -> Results:
    """The rows of a results CSV; BadFileError (one line) when it cannot be read or lacks a column, a counted skip
    for each row that cannot be used."""
    try:
        with open_regular(path) as f:  # a FIFO or /dev/zero is refused, not read until memory runs out
            data = f.read(MAX_RESULTS_BYTES + 1)
        if len(data) > MAX_RESULTS_BYTES:
            raise BadFileError(f"{path}: larger than {MAX_RESULTS_BYTES // (1 << 20)} MiB; not a results file")
        text = data.decode("utf-8-sig")
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
    out = Results(path, ignored_columns=[h for h, n in zip(header, names) if n is None])
    where = {n: i for i, n in enumerate(names) if n is not None}
    for line, row, problem in rows:
        if row is None:
            out.skipped.append(f"line {line}: {problem}")
            continue
        if not any(cell.strip() for cell in row):
            continue
        if len(row) < len(header):
            out.skipped.append(f"line {line}: {len(row)} fields where the header has {len(header)}")
            continue
        try:
            score, turns = float(row[where["score"]]), int(row[where["turns"]])
        except ValueError:
            out.skipped.append(f"line {line}: score {row[where['score']]!r} or turn count {row[where['turns']]!r} "
                               "is not a number")
            continue
        if not 0.0 <= score <= 1.0:
            out.skipped.append(f"line {line}: score {score} is outside 0..1")
            continue
        if turns < 0:
            out.skipped.append(f"line {line}: turn count {turns} is negative")
            continue
        out.runs.append(PublishedRun(row[where["eval"]].strip(), row[where["model"]].strip(),
                                     row[where["run"]].strip(), score, turns))
    return out


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


def eval_targets(overlays: Path | None = None) -> list[tuple[re.Pattern[str], str, Overlay]]:
    """(pattern of eval names, folder name, overlay) for every overlay we ship."""
    out = []
    for path in sorted((overlays or published_dir()).glob("*.toml")):
        overlay = Overlay.load(path)
        name = overlay.eval_name or path.stem
        parts = [re.escape(p) for p in name.split("{problem}")]
        pattern = re.compile("(?P<problem>.+)".join(parts) if len(parts) > 1 else parts[0])
        out.append((pattern, path.stem, overlay))
    return out


def eval_name_of(env: str, targets: list[tuple[re.Pattern[str], str, Overlay]]) -> str:
    """The name the published results give our environment ``env`` (its overlay's ``eval_name``), else ``env``."""
    for _pattern, folder, overlay in targets:
        name, ident = overlay.eval_name or folder, env_id(Path(folder), None)
        if "{problem}" not in name and env == ident:
            return name
        if "{problem}" in name and env.startswith(ident + "-"):
            return name.replace("{problem}", env[len(ident) + 1:])
    return env


def match_eval(name: str, targets: list[tuple[re.Pattern[str], str, Overlay]],
               known_envs: set[str]) -> EvalTarget | None:
    """Our environment for a published eval name: through an overlay's ``eval_name``, else an id we know."""
    for pattern, folder, overlay in targets:
        found = pattern.fullmatch(name)
        if found is None:
            continue
        problem = found.groupdict().get("problem")
        category = overlay.problem(problem).get("category") or overlay.category
        return EvalTarget(env_id(Path(folder), problem), category)
    return EvalTarget(name, None) if name in known_envs else None


def compare(report: dict[str, Any], results: Results, overlays: Path | None = None) -> dict[str, Any]:
    """The published models' numbers in the sweep's terms, task by task and category by category."""
    sweep_envs = {t["env"]: t["category"] for t in report["tasks"]}
    targets = eval_targets(overlays)
    names = Counter(r.eval_name for r in results.runs)
    found = {name: match_eval(name, targets, set(sweep_envs)) for name in names}
    matched = {name: target for name, target in found.items() if target is not None}
    unmatched = {name: names[name] for name, target in found.items() if target is None}
    tasks = []
    for (eval_name, model) in sorted({(r.eval_name, r.model) for r in results.runs if r.eval_name in matched}):
        mine = [r for r in results.runs if r.eval_name == eval_name and r.model == model]
        target = matched[eval_name]
        best = max(r.score for r in mine)
        tasks.append({"eval_name": eval_name, "env": target.env, "in_sweep": target.env in sweep_envs,
                      "category": sweep_envs.get(target.env) or target.category or "—", "model": model,
                      "runs": len(mine), "best": best, "mean": mean(r.score for r in mine),
                      "best_turns": [min(r.turns for r in mine if r.score == best),
                                     max(r.turns for r in mine if r.score == best)]})
    categories = []
    for category, model in sorted({(t["category"], t["model"]) for t in tasks if t["in_sweep"]}):
        mine = [t for t in tasks if t["in_sweep"] and t["category"] == category and t["model"] == model]
        categories.append({"category": category, "model": model, "tasks": len(mine),
                           "best_of_k": mean(t["best"] for t in mine)})
    return {"results": str(results.path), "runs": len(results.runs), "skipped": results.skipped,
            "ignored_columns": results.ignored_columns, "tasks": tasks, "categories": categories,
            "unmatched": [{"eval_name": n, "runs": k} for n, k in sorted(unmatched.items())],
            "not_in_sweep": sorted({t["eval_name"] for t in tasks if not t["in_sweep"]})}


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
    sources = [(c, "this sweep") for c in report["categories"]] + [(c, "published") for c in cmp["categories"]]
    categories = [{"category": c["category"], "model": c["model"], "source": source, "tasks": c["tasks"],
                   "best_of_k": c["best_of_k"]}
                  for c, source in sorted(sources, key=lambda cs: (cs[0]["category"], cs[1], cs[0]["model"]))]
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
           "read_results"]
