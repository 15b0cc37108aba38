"""The order a person reviews a sweep's runs in (``stripebench review DIR``, the grid's review queue): first the best
run of each task × agent, as the published method reviewed each best run; then the other runs, best first.

A best run judged ``integrity`` or ``other`` gives way (``batch.scorecard.best_run``), so the next best joins the
head of the queue; its judged run stays below with its verdict, where it can be judged again.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from stripebench_tui.batch.manifest import Batch
from stripebench_tui.batch.matrix import Cell
from stripebench_tui.batch.scorecard import ScoredRun, best_run
from stripebench_tui.batch.sweep_report import read_episode
from stripebench_tui.core.review import Review, load_review
from stripebench_tui.errors import UserError


@dataclass(frozen=True)
class QueueItem:
    run: ScoredRun  # eval_name: our environment id; model: the agent; run: the cell id
    best: bool  # the best run of its task × agent as the verdicts stand


def review_queue(runs: list[ScoredRun]) -> list[QueueItem]:
    """``runs`` in review order: each task × agent's best run (tasks, then agents, as first seen), then the rest
    (by task and agent, highest score and fewest turns first; infrastructure failures last)."""
    groups: dict[tuple[str, str], list[ScoredRun]] = {}
    for run in runs:
        groups.setdefault((run.eval_name, run.model), []).append(run)
    heads: list[QueueItem] = []
    rest: list[QueueItem] = []
    for mine in groups.values():
        best, _ = best_run([r for r in mine if r.verdict != "infra-failure"])
        if best is not None:
            heads.append(QueueItem(best, True))
        others = sorted((r for r in mine if r is not best),
                        key=lambda r: (r.verdict == "infra-failure", -r.score, r.turns))
        rest += [QueueItem(r, False) for r in others]
    return heads + rest


@dataclass(frozen=True)
class BatchRun:
    """A finished cell of a batch with its review, as the queue lists it."""

    cell: Cell
    run: ScoredRun
    review: Review | None


def batch_runs(batch: Batch) -> list[BatchRun]:
    """The batch's finished cells, scored from their result files (a trace is read only when its result file has no
    score or turns), with their reviews; a review file that cannot be read counts as none (the review command
    names it when that run is judged again)."""
    out = []
    for cell in batch.cells:
        result = batch.result(cell)
        if result is None or not batch.finished(cell):
            continue
        try:
            review = load_review(batch.episode_dir(cell))
        except UserError:
            review = None
        score, turns = result.get("score"), result.get("turns")
        if not isinstance(score, (int, float)) or not isinstance(turns, int):
            summary = read_episode(batch.episode_dir(cell))
            score, turns = (summary.score, summary.turns) if summary is not None else (None, 0)
        value = Fraction(repr(float(score))) if isinstance(score, (int, float)) else Fraction(0)
        out.append(BatchRun(cell, ScoredRun(cell.env, cell.agent_label, cell.id, value,
                                            turns if isinstance(turns, int) else 0,
                                            review.verdict if review else None), review))
    return out


def batch_queue(batch: Batch) -> list[tuple[QueueItem, BatchRun]]:
    """The batch's review queue, each item with its cell and review."""
    runs = {r.cell.id: r for r in batch_runs(batch)}
    return [(item, runs[item.run.run]) for item in review_queue([r.run for r in runs.values()])]


__all__ = ["BatchRun", "QueueItem", "batch_queue", "batch_runs", "review_queue"]
