"""The published benchmark's scorecard rule, as pure functions over runs (``stripebench scorecard``, ``batch report``).

Stripe's README says how its tables were made, and this module follows it:

- the score of a task for a model is its best run of k; a tie goes to the run with the fewest turns, and the turn
  range of a category spans those best runs' turn counts;
- the problems of one folder with several (the three SDK-upgrade problems of a language: charges-on-payment-intent,
  invoice-partial-payments, subscription-billing-migration) are first averaged into one task for that language; the
  turn range still counts each problem's best run;
- a category's figure is the average over its tasks, printed as a whole percentage rounded half up (Python's
  ``round`` rounds half to even: 60.5 would print 60 where the README prints 61). Sums are exact fractions, so no
  binary rounding decides a half.

Beside the best of k: the mean of k (each problem's mean over its runs, coalesced and averaged the same way) and
pass^k (each problem counts 1 when every one of its runs scored 1.0; coalesced and averaged the same way).

Run review (``batch.review``): a run judged ``infra-failure`` is left out (and counted), as Stripe discarded runs lost
to infrastructure; a run judged ``integrity`` or ``other`` cannot be a best run (the next best takes its place), counts
0 in the mean and fails pass^k. An unreviewed run counts as it scored.

Nothing here reads a file: the caller hands in the runs, each eval name's task and category, and the README's
printed rows when it has them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction

from stripebench_tui.core.json_value import JSONValue

NOT_VALID = ("integrity", "other")  # judged: it may not stand as a best run
CATEGORY_ORDER = ("backend", "full-stack", "gym")


@dataclass(frozen=True)
class ScoredRun:
    """One run of the results: which eval and model, its score (exact) and turns, and its review verdict if any."""

    eval_name: str
    model: str
    run: str
    score: Fraction
    turns: int
    verdict: str | None = None


@dataclass(frozen=True)
class TaskUnit:
    """The task an eval name counts toward (a problem of a multi-problem folder counts toward the folder's task)."""

    task: str
    category: str


@dataclass(frozen=True)
class PrintedRow:
    """One row of a printed table: the cells as printed, and their values where they could be read."""

    category: str
    model: str
    average_text: str
    turns_text: str
    average: int | None
    turns: tuple[int, int] | None


@dataclass(frozen=True)
class ProblemScore:
    """One eval name × model: its best run after review, the mean of k and whether every run passed."""

    eval_name: str
    task: str
    category: str
    model: str
    runs: int  # runs counted (infra failures left out)
    best: ScoredRun | None  # None when every counted run was judged not valid
    mean: Fraction
    passed_all: bool
    gave_way: int  # better runs judged not valid that gave way to this best


@dataclass(frozen=True)
class CategoryScore:
    """One category × model, as the README's tables print it plus what we add."""

    category: str
    model: str
    best: Fraction  # a share (0..1), exact
    mean: Fraction
    pass_k: Fraction
    turn_range: tuple[int, int] | None
    tasks: int  # tasks this model has runs for
    of_tasks: int  # tasks of the category in the results (any model)
    missing: tuple[str, ...]  # tasks (or a task's problems, as task/eval) this model lacks
    printed: PrintedRow | None = None

    @property
    def partial(self) -> bool:
        return bool(self.missing)


@dataclass(frozen=True)
class Difference:
    """A printed cell that is not what the results give."""

    category: str
    model: str
    column: str  # "average" or "turn range"
    printed: str
    recomputed: str

    def __str__(self) -> str:
        return f"{self.category} · {self.model}: {self.column} printed {self.printed}, recomputed {self.recomputed}"


@dataclass
class Scorecard:
    categories: list[CategoryScore]
    problems: list[ProblemScore]
    differences: list[Difference] = field(default_factory=list)
    unmatched: dict[str, int] = field(default_factory=dict)  # eval names no task claims: runs left out
    infra_left_out: int = 0
    best_runs: int = 0
    best_reviewed: int = 0  # best runs that carry a verdict (after giving way)
    gave_way: int = 0  # best runs judged not valid, replaced by the next best
    not_printed: list[tuple[str, str]] = field(default_factory=list)  # (category, model) computed, not in the README


def percent(share: Fraction) -> int:
    """A share as the README prints it: a whole percentage, rounded half up."""
    exact = Decimal(share.numerator * 100) / Decimal(share.denominator)
    return int(exact.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def percent_tenths(share: Fraction) -> str:
    """A share to a tenth of a percent, rounded half up (how a difference is shown: ``79.4%``)."""
    exact = Decimal(share.numerator * 100) / Decimal(share.denominator)
    return f"{exact.quantize(Decimal('0.1'), rounding=ROUND_HALF_UP)}%"


def turn_text(pair: tuple[int, int] | None) -> str:
    """A turn range as the README prints it (``18 - 71``)."""
    return "—" if pair is None else f"{pair[0]} - {pair[1]}"


def best_run(runs: Sequence[ScoredRun]) -> tuple[ScoredRun | None, int]:
    """The best of ``runs`` (highest score, then fewest turns, then first listed) among those that may stand, and how
    many better-ranked runs judged not valid gave way to it."""
    ranked = sorted(enumerate(runs), key=lambda ir: (-ir[1].score, ir[1].turns, ir[0]))
    gave_way = 0
    for _, run in ranked:
        if run.verdict in NOT_VALID:
            gave_way += 1
            continue
        return run, gave_way
    return None, gave_way


def score_problem(eval_name: str, model: str, unit: TaskUnit, runs: Sequence[ScoredRun]) -> ProblemScore | None:
    """One eval × model from its runs (None when every run was an infrastructure failure)."""
    counted = [r for r in runs if r.verdict != "infra-failure"]
    if not counted:
        return None
    best, gave_way = best_run(counted)
    valued = [Fraction(0) if r.verdict in NOT_VALID else r.score for r in counted]
    return ProblemScore(eval_name, unit.task, unit.category, model, len(counted), best,
                        sum(valued, Fraction(0)) / len(valued),
                        all(v == 1 for v in valued), gave_way)


def _average(values: Iterable[Fraction]) -> Fraction:
    values = list(values)
    return sum(values, Fraction(0)) / len(values)


def category_key(category: str) -> tuple[int, str]:
    """Categories in the README's order (backend, full-stack, gym), any other after them."""
    return (CATEGORY_ORDER.index(category) if category in CATEGORY_ORDER else len(CATEGORY_ORDER), category)


def score_runs(runs: Sequence[ScoredRun], units: Mapping[str, TaskUnit],
               printed: Sequence[PrintedRow] = ()) -> Scorecard:
    """The scorecard of ``runs``: each eval name counts toward ``units[eval_name]`` (eval names without one are left
    out and counted); with ``printed`` (the README's rows), every printed cell is compared with its recomputed one."""
    unmatched: dict[str, int] = {}
    grouped: dict[tuple[str, str], list[ScoredRun]] = {}
    models: list[str] = []
    for run in runs:
        if run.eval_name not in units:
            unmatched[run.eval_name] = unmatched.get(run.eval_name, 0) + 1
            continue
        grouped.setdefault((run.eval_name, run.model), []).append(run)
        if run.model not in models:
            models.append(run.model)
    problems = [p for (eval_name, model), mine in grouped.items()
                if (p := score_problem(eval_name, model, units[eval_name], mine)) is not None]
    # What a category holds: every task, and every task's problems, that any model has runs for.
    holds: dict[str, dict[str, set[str]]] = {}
    for p in problems:
        holds.setdefault(p.category, {}).setdefault(p.task, set()).add(p.eval_name)
    printed_at = {(row.category, row.model): row for row in printed}
    order: dict[str, int] = {}
    for row in printed:
        order.setdefault(row.model, len(order))
    categories: list[CategoryScore] = []
    for category in sorted(holds, key=category_key):
        for model in sorted(models, key=lambda m: (order.get(m, len(order)), models.index(m))):
            mine = [p for p in problems if p.category == category and p.model == model]
            if not mine:
                continue
            by_task: dict[str, list[ProblemScore]] = {}
            for p in mine:
                by_task.setdefault(p.task, []).append(p)
            best = _average(_average(p.best.score if p.best else Fraction(0) for p in ps) for ps in by_task.values())
            mean = _average(_average(p.mean for p in ps) for ps in by_task.values())
            pass_k = _average(_average(Fraction(int(p.passed_all)) for p in ps) for ps in by_task.values())
            turns = [p.best.turns for p in mine if p.best is not None]
            missing = [task for task in sorted(holds[category]) if task not in by_task]
            missing += [f"{task}/{name}" for task, ps in sorted(by_task.items())
                        for name in sorted(holds[category][task] - {p.eval_name for p in ps})]
            categories.append(CategoryScore(category, model, best, mean, pass_k,
                                            (min(turns), max(turns)) if turns else None, len(by_task),
                                            len(holds[category]), tuple(missing), printed_at.get((category, model))))
    card = Scorecard(categories, problems, unmatched=unmatched,
                     infra_left_out=sum(1 for ms in grouped.values() for r in ms if r.verdict == "infra-failure"),
                     best_runs=sum(1 for p in problems if p.best is not None),
                     best_reviewed=sum(1 for p in problems if p.best is not None and p.best.verdict is not None),
                     gave_way=sum(p.gave_way for p in problems))
    card.differences, card.not_printed = compare_printed(categories, printed)
    return card


def category_row(c: CategoryScore) -> dict[str, JSONValue]:
    """A category × model as a report's JSON carries it: shares (0..1) and the percentages printed from them."""
    return {"category": c.category, "model": c.model, "tasks": c.tasks, "of_tasks": c.of_tasks,
            "missing": list(c.missing), "best_of_k": float(c.best), "best_percent": percent(c.best),
            "best_turns": list(c.turn_range) if c.turn_range else None, "mean": float(c.mean),
            "mean_percent": percent(c.mean), "pass_k": float(c.pass_k), "pass_k_percent": percent(c.pass_k)}


def review_counts(card: Scorecard) -> dict[str, int]:
    """How much of a scorecard rests on review."""
    return {"best_runs": card.best_runs, "best_reviewed": card.best_reviewed, "gave_way": card.gave_way,
            "infra_failure_left_out": card.infra_left_out}


def review_sentence(counts: Mapping[str, int]) -> str:
    """``review_counts`` in words (Stripe reviewed every best run by hand)."""
    return (f"Review: {counts['best_reviewed']} of {counts['best_runs']} best runs reviewed; {counts['gave_way']} "
            f"judged not valid gave way to the next best; {counts['infra_failure_left_out']} runs left out as "
            "infra-failure.")


def compare_printed(categories: Sequence[CategoryScore],
                    printed: Sequence[PrintedRow]) -> tuple[list[Difference], list[tuple[str, str]]]:
    """Every printed cell against its recomputed one; and the computed rows the README does not print."""
    computed = {(c.category, c.model): c for c in categories}
    differences = []
    for row in printed:
        mine = computed.get((row.category, row.model))
        if mine is None:
            differences += [Difference(row.category, row.model, "average", row.average_text, "no runs in the results"),
                            Difference(row.category, row.model, "turn range", row.turns_text, "no runs in the results")]
            continue
        if row.average != percent(mine.best):
            differences.append(Difference(row.category, row.model, "average", row.average_text,
                                          f"{percent(mine.best)}% ({percent_tenths(mine.best)})"))
        if row.turns != mine.turn_range:
            differences.append(Difference(row.category, row.model, "turn range", row.turns_text,
                                          turn_text(mine.turn_range)))
    seen = {(row.category, row.model) for row in printed}
    printed_categories = {row.category for row in printed}
    not_printed = [(c.category, c.model) for c in categories
                   if c.category in printed_categories and (c.category, c.model) not in seen]
    return differences, not_printed


__all__ = ["best_run", "category_key", "CATEGORY_ORDER", "category_row", "CategoryScore", "compare_printed",
           "Difference", "NOT_VALID", "percent", "percent_tenths", "PrintedRow", "ProblemScore", "review_counts",
           "review_sentence", "score_problem", "score_runs", "Scorecard", "ScoredRun", "TaskUnit", "turn_text"]
