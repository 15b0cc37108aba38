"""What went wrong across a sweep, not only how it scored: failure modes by agent and environment.

From the report's runs (``batch.report.build_report``: each with its findings, failing criteria and costs):

* ``failure_modes`` — each finding kind × agent × environment: in how many of the runs it fired (and their share),
  and the median turn it first fired at;
* ``with_failures`` — each finding kind: in how many failed runs it fired, in how many passed ones, and the
  criteria that failed beside it (most frequent first);
* ``distributions`` — per agent: turns, seconds, tokens and cost as median and p90 over its runs.

Every number names the runs behind it (``cells``), so a report can link to the episodes.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from statistics import median
from typing import Any


def p90(values: Sequence[float]) -> float:
    """The 90th percentile by the nearest-rank method (the value at rank ceil(0.9·n)); 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return float(ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)])


def failure_modes(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Finding kind × agent × environment: runs where it fired, of how many, and the median first turn."""
    totals = Counter((r["model"], r["env"]) for r in runs)
    fired: dict[tuple[str, str, str], list[tuple[str, int]]] = {}
    for r in runs:
        first: dict[str, int] = {}
        for f in r["findings"]:
            first[f["kind"]] = min(first.get(f["kind"], f["turn"]), f["turn"])
        for kind, turn in first.items():
            fired.setdefault((kind, r["model"], r["env"]), []).append((r["cell"], turn))
    rows = []
    for (kind, model, env), hits in fired.items():
        runs_of = totals[(model, env)]
        rows.append({"finding": kind, "model": model, "env": env, "fired": len(hits), "runs": runs_of,
                     "share": len(hits) / runs_of, "median_turn": median(t for _, t in hits),
                     "cells": sorted(c for c, _ in hits)})
    return sorted(rows, key=lambda r: (r["finding"], r["model"], r["env"]))


def with_failures(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per finding kind: how often it fired on failed runs and on passed ones, and the criteria failing beside it."""
    rows = []
    for kind in sorted({f["kind"] for r in runs for f in r["findings"]}):
        mine = [r for r in runs if any(f["kind"] == kind for f in r["findings"])]
        failed = [r for r in mine if not r["passed"]]
        criteria = Counter(c for r in failed for c in r["failed"])
        rows.append({"finding": kind, "runs": len(mine), "failed_runs": len(failed),
                     "passed_runs": len(mine) - len(failed),
                     "criteria": [{"criterion": c, "runs": n} for c, n in sorted(criteria.items(),
                                                                                  key=lambda kv: (-kv[1], kv[0]))],
                     "cells": sorted(r["cell"] for r in mine)})
    return rows


def distributions(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per agent: median and p90 of turns, seconds, tokens and cost over its runs."""
    rows = []
    for model in sorted({r["model"] for r in runs}):
        mine = [r for r in runs if r["model"] == model]
        row: dict[str, Any] = {"model": model, "runs": len(mine)}
        for name in ("turns", "seconds", "tokens", "cost_usd"):
            values = [float(r[name]) for r in mine]
            row[name] = {"median": float(median(values)), "p90": p90(values)}
        rows.append(row)
    return rows


def insight(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The three tables above, for the report's JSON (its keys are documented in docs/batch.md)."""
    return {"failure_modes": failure_modes(runs), "with_failures": with_failures(runs),
            "distributions": distributions(runs)}


__all__ = ["distributions", "failure_modes", "insight", "p90", "with_failures"]
