"""One offline HTML file for a sweep (``stripebench batch report DIR --format html -o sweep.html``).

Built from the report's numbers (``batch.report.build_report``): the score by category × agent (best of k, drawn as
bars the way the published chart draws them), a heat map of failure modes × agents, the criteria that fail most,
every task, and with ``--compare`` the published models beside the sweep's agents (the Markdown's tables,
``batch.published.comparison_tables``). Every number links to a list of the runs behind it, and every run to its own
episode report, written beside the file (``<name>-episodes/<cell>.html``, the same report as ``stripebench report``).
Jinja2 with autoescape: every value is text; no script, nothing fetched; the environment's secrets were redacted in the
traces already, and the episode reports redact again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2

from stripebench_tui.batch.manifest import Batch
from stripebench_tui.batch.published import comparison_tables
from stripebench_tui.batch.scorecard import review_sentence
from stripebench_tui.batch.sweep_report import tasks_text, turn_range
from stripebench_tui.formats.episode_report import build_report as build_episode_report
from stripebench_tui.formats.open import open_episode
from stripebench_tui.formats.report_html import render_report

TEMPLATES = Path(__file__).with_name("templates")


@dataclass
class Group:
    """A set of runs a number stands for; rendered as a list with an anchor."""

    anchor: str
    title: str
    cells: list[str]


@dataclass
class Groups:
    by_anchor: dict[str, Group] = field(default_factory=dict)

    def add(self, title: str, cells: list[str]) -> str:
        anchor = "g-" + hashlib.sha1(title.encode()).hexdigest()[:12]
        if anchor not in self.by_anchor:
            self.by_anchor[anchor] = Group(anchor, title, sorted(cells))
        return anchor


def sweep_view(report: dict[str, Any]) -> dict[str, Any]:
    """What the template draws: tables of numbers, each with the anchor of its runs."""
    groups = Groups()
    runs = {r["cell"]: r for r in report["runs"]}
    agents = sorted({r["model"] for r in report["runs"]})
    categories = sorted({r["category"] for r in report["runs"]})
    by_category = {(c["category"], c["model"]): c for c in report["categories"]}
    score_rows = []
    for category in categories:
        cells = []
        for agent in agents:
            c = by_category.get((category, agent))
            mine = [r["cell"] for r in report["runs"] if r["category"] == category and r["model"] == agent]
            cells.append(None if c is None else {
                "score": c["best_of_k"], "percent": c["best_percent"], "turns": c["best_turns"],
                "mean_percent": c["mean_percent"], "pass_k_percent": c["pass_k_percent"], "tasks": c["tasks"],
                "of_tasks": c["of_tasks"],
                "anchor": groups.add(f"{category} · {agent}: every run", mine)})
        score_rows.append({"category": category, "cells": cells})
    agent_runs = {a: [r for r in report["runs"] if r["model"] == a] for a in agents}
    kinds = sorted({m["finding"] for m in report["failure_modes"]})
    heat_rows = []
    for kind in kinds:
        cells = []
        for agent in agents:
            fired = [r["cell"] for r in agent_runs[agent] if any(f["kind"] == kind for f in r["findings"])]
            total = len(agent_runs[agent])
            cells.append({"fired": len(fired), "runs": total, "share": len(fired) / total if total else 0.0,
                          "anchor": groups.add(f"{kind} · {agent}: runs where it fired", fired) if fired else None})
        heat_rows.append({"finding": kind, "cells": cells})
    criteria = [{**c, "anchor": groups.add(f"{c['env']} · {c['criterion']}: runs where it failed", c["cells"])}
                for c in report["criteria"][:20]]
    tasks = []
    for t in report["tasks"]:
        mine = [r["cell"] for r in report["runs"] if r["env"] == t["env"] and r["model"] == t["model"]]
        tasks.append({**t, "anchor": groups.add(f"{t['env']} · {t['model']}: every run", mine)})
    group_list = [{"anchor": g.anchor, "title": g.title, "runs": [runs[c] for c in g.cells if c in runs]}
                  for g in groups.by_anchor.values()]
    return {"agents": agents, "score_rows": score_rows, "heat_rows": heat_rows, "criteria": criteria, "tasks": tasks,
            "groups": group_list, "compare": comparison_tables(report) if "compare" in report else None,
            "review": review_sentence(report["review"])}


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, trim_blocks=True,
                             lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    env.filters["pct"] = lambda x: f"{100 * x:.0f} %"
    env.filters["turns"] = turn_range
    env.filters["tasks"] = tasks_text
    return env


def render_sweep(report: dict[str, Any], episode_links: dict[str, str]) -> str:
    """The sweep's HTML; ``episode_links`` maps a cell id to its episode report's relative address."""
    return _environment().get_template("sweep.html.j2").render(
        report=report, view=sweep_view(report), links=episode_links)


def write_sweep(batch: Batch, report: dict[str, Any], out: Path,
                progress: Callable[[int, int], None] | None = None) -> tuple[Path, list[Path]]:
    """Write the sweep's HTML to ``out`` and each finished run's episode report beside it; returns the files."""
    folder = out.with_name(out.stem + "-episodes")
    folder.mkdir(parents=True, exist_ok=True)
    links: dict[str, str] = {}
    written: list[Path] = []
    cells = {c.id: c for c in batch.cells}
    for n, run in enumerate(report["runs"], start=1):
        cell = cells[run["cell"]]
        page = folder / f"{cell.id}.html"
        page.write_text(render_report(build_episode_report(open_episode(batch.episode_dir(cell) / "trace.jsonl")),
                                      "html"), encoding="utf-8")
        links[cell.id] = f"{folder.name}/{page.name}"
        written.append(page)
        if progress is not None:
            progress(n, len(report["runs"]))
    out.write_text(render_sweep(report, links), encoding="utf-8")
    return out, written


__all__ = ["render_sweep", "sweep_view", "write_sweep"]
