"""Outcomes of scenario-based checks: a scenario raises ``Miss`` when the app breaks a rule of the task.

Scenario graders drive the app (book, pay, deliver an event…) and turn what went wrong into outcomes the same
way: a ``Miss`` is a failing outcome with its summary and evidence, an app that does not answer over HTTP
fails, anything else is a grader error (never a pass). A setup the grader cannot make (no app to start, no
database) fails every criterion with "cannot grade: …".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import httpx

from stripebench_tui.grading.app_copy import AppDown
from stripebench_tui.grading.context import GradingContext, GradingUnavailable
from stripebench_tui.grading.criteria import Criterion, Outcome, error_outcome, failed

# Every criterion of a shared scenario run waits for all of it (grading/once.py), on a loaded machine too; this
# only ends a run that is stuck (an app that never answers), never a slow one.
SCENARIOS_TIMEOUT = 900.0


R = TypeVar("R")
Scenario = Callable[[Any], "Outcome | dict[str, Outcome]"]


class Miss(Exception):
    """The app broke a rule of the task; becomes a failing outcome with this summary and evidence."""

    def __init__(self, summary: str, **evidence: Any) -> None:
        super().__init__(summary)
        self.summary, self.evidence = summary, evidence


def need(ok: bool, summary: str, **evidence: Any) -> None:
    """Raise Miss(summary) unless ``ok``."""
    if not ok:
        raise Miss(summary, **evidence)


def outcome_of(exc: Exception, noun: str = "app") -> Outcome:
    """The outcome of a scenario that raised ``exc``: Miss and HTTP failures fail, anything else is an error."""
    if isinstance(exc, Miss):
        return failed(exc.summary, **exc.evidence)
    if isinstance(exc, httpx.HTTPError):
        return failed(f"the {noun} did not answer: {type(exc).__name__}: {exc}")
    return error_outcome(exc)


def setup_outcome(exc: Exception) -> Outcome:
    """The outcome of every criterion when the grading run could not be set up."""
    if isinstance(exc, (AppDown, GradingUnavailable)):
        return failed(f"cannot grade: {exc}")
    return error_outcome(exc)


# Any: whatever the graders' scenarios take (an app copy, a client): each grader decides
def run_scenarios(run: Any, scenarios: Iterable[tuple[tuple[str, ...], Scenario]], noun: str = "app") -> dict[str, Outcome]:
    """Each scenario in order on ``run``; it answers one Outcome (for its first name) or a dict of them.

    A scenario that raises gives ``outcome_of(exc)`` to each of its names it had not answered; the rest still run.
    """
    results: dict[str, Outcome] = {}
    for names, scenario in scenarios:
        try:
            got = scenario(run)
        except Exception as exc:  # noqa: BLE001 - reported as failed or error, never pass
            for name in names:
                results.setdefault(name, outcome_of(exc, noun))
        else:
            results.update(got if isinstance(got, dict) else {names[0]: got})
    return results


def with_run(ctx: GradingContext, start: Callable[[Any], R], names: Iterable[str],
             body: Callable[[R], dict[str, Outcome]]) -> dict[str, Outcome]:
    """``body(start(ctx))``, closing the run after (when it has ``close``); a failed start is every name's outcome."""
    try:
        run = start(ctx)
    except Exception as exc:  # noqa: BLE001 - a broken setup fails (or errors) every criterion
        setup = setup_outcome(exc)
        return {name: setup for name in names}
    try:
        return body(run)
    finally:
        close = getattr(run, "close", None)
        if close is not None:
            close()


def scenario_criterion(name: str, weight: float, description: str,
                       results: Callable[[Any], dict[str, Outcome]]) -> Criterion:
    """A final-only criterion whose outcome is ``results(ctx)[name]``, from the scenario run its grader shares.

    Its timeout covers the whole shared run, not one check: the criteria asking for the results while one of
    them computes them wait for it.
    """
    return Criterion(name, weight, description, lambda ctx, view: results(ctx)[name], final_only=True,
                     timeout=SCENARIOS_TIMEOUT)


__all__ = ["SCENARIOS_TIMEOUT", "Miss", "need", "outcome_of", "run_scenarios", "scenario_criterion", "setup_outcome",
           "with_run"]
