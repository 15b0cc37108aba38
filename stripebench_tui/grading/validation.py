"""Proving an environment gradable: the oracle scores 1.0, the no-op agent 0, every mutant below 1.0.

``validate(envs, runner)`` plays each run through ``runner`` (the CLI passes
``runtime.validate.episode_runner``, which plays a real episode; this module never
imports the runtime), reports progress as it goes and returns one ``Row`` per run;
``validation_table`` prints them. Tests inject a fake runner to check the table and
the verdict logic without running episodes.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from rich.table import Table
from rich.text import Text

from stripebench_tui.core.sanitize import sanitize
from stripebench_tui.envs.manifest import Environment
from stripebench_tui.grading.loader import grader_path, load_grader
from stripebench_tui.grading.results_table import GLYPHS, STYLES

ORACLE, NOOP, MUTANT = "oracle", "no-op", "mutant"


@dataclass(frozen=True)
class Run:
    """One episode to play: the oracle, the no-op agent or a mutant plan (played by the oracle agent)."""

    kind: str  # ORACLE | NOOP | MUTANT
    plan: str | None = None  # the mutant's name
    finding: str = ""  # the mutant's signature finding, as its manifest declares it ("" when none)

    @property
    def label(self) -> str:
        return f"mutant {self.plan}" if self.kind == MUTANT else self.kind

    @property
    def expectation(self) -> str:
        return {ORACLE: "= 1.0", NOOP: "= 0"}.get(self.kind, "< 1.0")

    def meets(self, score: float | None) -> bool:
        """Whether ``score`` is what this kind of run must get."""
        if score is None:
            return False
        if self.kind == ORACLE:
            return score == 1.0
        if self.kind == NOOP:
            return score == 0.0
        return score < 1.0


@dataclass
class RunOutcome:
    """What a runner reports: the score, each criterion's final status, how long it took, what went wrong."""

    score: float | None
    statuses: dict[str, str] = field(default_factory=dict)
    duration: float = 0.0
    error: str = ""
    trace_path: Path | None = None
    findings: list[str] = field(default_factory=list)  # the detectors that fired during the run


@dataclass
class ValidationRow:
    env: str
    run: Run
    outcome: RunOutcome
    criteria: list[str]

    @property
    def ok(self) -> bool:
        return not self.outcome.error and self.run.meets(self.outcome.score)


Runner = Callable[[Environment, Run], Awaitable[RunOutcome]]
Progress = Callable[[str], None]


def runs_for(env: Environment) -> list[Run]:
    """The oracle, the no-op agent, then every mutant of ``env``."""
    return [Run(ORACLE), Run(NOOP)] + [Run(MUTANT, m.name, m.finding) for m in env.manifest.mutants]


async def validate(envs: list[Environment], runner: Runner, progress: Progress = lambda _line: None) -> list[ValidationRow]:
    """Play every run of every environment; one row each, in order."""
    rows: list[ValidationRow] = []
    plan = [(env, run) for env in envs for run in runs_for(env)]
    for n, (env, run) in enumerate(plan, 1):
        try:
            grader = load_grader(env)
        except Exception as exc:  # noqa: BLE001 - a broken grader file fails its rows; other envs still run
            grader, problem = None, str(exc)
        else:
            problem = "" if grader is not None else f"no grader: {grader_path(env)} does not exist"
        criteria = [c.name for c in grader.criteria] if grader is not None else []
        progress(f"[{n}/{len(plan)}] {env.id}: {run.label} …")
        if problem:
            outcome = RunOutcome(score=None, error=problem)
        elif run.kind == ORACLE and env.manifest.solution is None:
            outcome = RunOutcome(score=None, error="the manifest has no solution plan")
        else:
            started = time.monotonic()
            try:
                outcome = await runner(env, run)
            except Exception as exc:  # noqa: BLE001 - one failed run is a failed row, not a crashed validation
                outcome = RunOutcome(score=None, error=f"{type(exc).__name__}: {exc}")
            outcome.duration = outcome.duration or time.monotonic() - started
        # An external grader's criteria are only known from its report: the run's own final verdicts name them.
        row = ValidationRow(env.id, run, outcome, criteria or list(outcome.statuses))
        rows.append(row)
        score = "—" if outcome.score is None else f"{outcome.score:.2f}"
        progress(f"[{n}/{len(plan)}] {env.id}: {run.label} → {score} in {outcome.duration:.1f}s "
                 + ("ok" if row.ok else f"WRONG (expected {run.expectation})"))
    return rows


def glyphs(row: ValidationRow) -> Text:
    """One coloured glyph per criterion, in the grader's order."""
    text = Text()
    for name in row.criteria:
        status = row.outcome.statuses.get(name, "")
        text.append(GLYPHS.get(status, "·"), style=STYLES.get(status, "dim"))
    return text


def validation_table(rows: list[ValidationRow]) -> Table:
    """The table ``stripebench validate`` prints."""
    table = Table(title="validation", title_justify="left")
    for name, justify in (("env", "left"), ("agent/plan", "left"), ("score", "right"), ("expected", "left"),
                          ("criteria", "left"), ("duration", "right"), ("", "left")):
        table.add_column(name, justify=justify, no_wrap=name != "")  # type: ignore[arg-type]
    for row in rows:
        score = "—" if row.outcome.score is None else f"{row.outcome.score:.2f}"
        verdict = Text("ok", style="green") if row.ok else Text(sanitize(row.outcome.error or "wrong score"), style="red")
        table.add_row(Text(sanitize(row.env)), Text(sanitize(row.run.label)), score, row.run.expectation, glyphs(row),
                      f"{row.outcome.duration:.1f}s", verdict)
    return table


def legend(rows: list[ValidationRow]) -> list[str]:
    """Per environment, which criterion each glyph column is."""
    seen: dict[str, list[str]] = {}
    for row in rows:
        if row.criteria and row.env not in seen:
            seen[row.env] = row.criteria
    return [f"{env} criteria: " + ", ".join(f"{i} {name}" for i, name in enumerate(names, 1)) for env, names in seen.items()]


def warnings(rows: list[ValidationRow]) -> list[str]:
    """Valid but suspicious: a mutant scoring 0 like the no-op agent probably never got its change working."""
    out = []
    for row in rows:
        if row.run.kind == MUTANT and row.ok and row.outcome.score == 0.0:
            out.append(f"note: {row.env} {row.run.label} scores 0 like the no-op agent; a plausible wrong solution "
                       "should keep some points, so check that its plan's changes took effect")
    return out


def findings_report(rows: list[ValidationRow]) -> list[str]:
    """Per environment, which findings fired on the oracle (should be none) and on each mutant (its signature
    should), then precision and recall over all mutants.

    A signature that fired is a true positive, one that did not a miss; any finding on an oracle is a false
    positive. A mutant's other findings are not counted either way: a wrong solution can fail in more than one way.
    """
    lines: list[str] = []
    hits = misses = false = 0
    for env in dict.fromkeys(r.env for r in rows):
        parts = []
        for row in (r for r in rows if r.env == env and r.run.kind != NOOP):
            fired = row.outcome.findings
            if row.run.kind == ORACLE:
                false += len(fired)
                parts.append(f"oracle: {', '.join(fired) if fired else 'none'}{' (should be none)' if fired else ''}")
                continue
            mark = ""
            if row.run.finding:
                hit = row.run.finding in fired
                hits, misses = hits + hit, misses + (not hit)
                mark = f" [{'✓' if hit else '✗ missing ' + row.run.finding}]"
            parts.append(f"{row.run.label}: {', '.join(fired) if fired else 'none'}{mark}")
        lines.append(f"{env} findings: " + "; ".join(parts))
    if hits + misses + false:
        precision = f"{hits / (hits + false):.2f}" if hits + false else "—"
        recall = f"{hits / (hits + misses):.2f}" if hits + misses else "—"
        lines.append(f"findings: precision {precision} ({hits} signatures fired, {false} on oracles), "
                     f"recall {recall} ({hits} of {hits + misses} mutants with a declared signature)")
    return lines


def all_ok(rows: list[ValidationRow]) -> bool:
    """Oracle = 1.0, no-op = 0 and every mutant < 1.0, with no errors (and at least one run)."""
    return bool(rows) and all(r.ok for r in rows)


__all__ = ["MUTANT", "NOOP", "ORACLE", "ValidationRow", "Run", "RunOutcome", "Runner", "all_ok", "findings_report", "legend",
           "runs_for", "validate", "validation_table", "warnings"]
