"""What a grader is: named, weighted criteria, each a check that returns an ``Outcome``.

A grader module (``graders/<env>.py``) builds a ``Grader`` from ``Criterion``s.
A check is ``check(ctx, view) -> Outcome``: a plain function (run in a worker
thread, so it may call the Stripe SDK synchronously) or an ``async def`` (run on
the event loop; use it for ``await ctx.browser()``). Checks read state only
through the context's public means: the Stripe API, the app over HTTP, the app's
database, a browser.

When the grader names ``candidates`` (say, every ``checkout.session``), each
per-candidate criterion is checked once per candidate with ``view.candidate`` set
to its id, and the candidate with the most passing weight is the one reported.
Once the agent has written its submission, the submitted id is the only candidate.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from stripebench_tui.core.events import ERROR, FAIL, PASS, PENDING, VERDICT_STATUSES
from stripebench_tui.core.json_value import JSONValue

ANY_OBJECT = "*"  # in ``Criterion.on``: re-check on every Stripe object


@dataclass(frozen=True)
class Outcome:
    """A check's answer: a status, the evidence behind it (ids, expected vs actual) and one line for people."""

    status: str
    evidence: dict[str, Any] = field(default_factory=dict)
    summary: str = ""

    def __post_init__(self) -> None:
        if self.status not in VERDICT_STATUSES:
            raise ValueError(f"unknown verdict status {self.status!r}; use one of {', '.join(VERDICT_STATUSES)}")


def passed(summary: str = "", **evidence: Any) -> Outcome:
    """A passing outcome with ``evidence`` as keyword arguments."""
    return Outcome(PASS, evidence, summary)


def failed(summary: str = "", **evidence: Any) -> Outcome:
    """A failing outcome with ``evidence`` as keyword arguments."""
    return Outcome(FAIL, evidence, summary)


def pending(summary: str = "", **evidence: Any) -> Outcome:
    """Not decidable yet (e.g. nothing paid so far); a pending criterion fails at the end."""
    return Outcome(PENDING, evidence, summary)


def expect(what: str, expected: JSONValue, actual: JSONValue, **evidence: Any) -> Outcome:
    """Pass when ``actual == expected``; the evidence records both either way."""
    ok = actual == expected
    summary = f"{what} is {actual!r}" + ("" if ok else f", expected {expected!r}")
    return Outcome(PASS if ok else FAIL, {"expected": expected, "actual": actual, **evidence}, summary)


Check = Callable[[Any, "GradingView"], "Outcome | Awaitable[Outcome]"]


@dataclass(frozen=True)
class Criterion:
    """One thing the grader checks.

    ``on`` lists the Stripe object types whose appearance or change re-checks it live
    (``"*"`` for any); every criterion that is not ``final_only`` is also re-checked at
    each turn end. ``final_only`` criteria (slow ones: a browser flow) run only at the end.
    A check running longer than ``timeout`` seconds is reported as an error.
    ``per_candidate`` (default: whenever the grader has candidates) checks it once per
    candidate object; set it False for criteria about the app as a whole.
    """

    name: str
    weight: float
    description: str
    check: Check
    on: tuple[str, ...] = ()
    final_only: bool = False
    per_candidate: bool | None = None
    timeout: float = 120.0  # seconds; a check still running then is an error

    def __post_init__(self) -> None:
        if not self.name or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.\- ]*", self.name):
            raise ValueError(f"criterion name {self.name!r}: use letters, digits, spaces, '_', '-' or '.'")
        if not isinstance(self.weight, (int, float)) or isinstance(self.weight, bool) or self.weight <= 0:
            raise ValueError(f"criterion {self.name!r}: weight must be a positive number, not {self.weight!r}")
        if not self.description.strip():
            raise ValueError(f"criterion {self.name!r}: give a description a person understands")
        if not self.timeout > 0:
            raise ValueError(f"criterion {self.name!r}: timeout must be positive")
        if not callable(self.check):
            raise ValueError(f"criterion {self.name!r}: check must be callable")
        if isinstance(self.on, str):  # a lone type written without the tuple comma
            object.__setattr__(self, "on", (self.on,))
        else:
            object.__setattr__(self, "on", tuple(self.on))

    @property
    def is_async(self) -> bool:
        return inspect.iscoroutinefunction(self.check) or inspect.iscoroutinefunction(getattr(self.check, "__call__", None))  # noqa: B004 - its __call__ method, asked whether it is async

    def watches(self, object_type: str) -> bool:
        """True when an object of ``object_type`` should re-check this criterion live."""
        return not self.final_only and (ANY_OBJECT in self.on or object_type in self.on)


def first_id(prefix: str) -> Callable[[str], str | None]:
    """A submission parser: the first ``prefix…`` id in the text (e.g. ``first_id("cs_")``)."""
    pattern = re.compile(re.escape(prefix) + r"[A-Za-z0-9_]+")

    def parse(text: str) -> str | None:
        m = pattern.search(text)
        return m.group(0) if m else None

    return parse


@dataclass(frozen=True)
class Candidates:
    """Which objects the grader weighs: every object of ``object_type`` seen, or the submitted one.

    ``from_submission`` turns the submission text into an id (None when it holds none);
    by default the first id that starts like one of the seen objects' ids, else the stripped text.
    """

    object_type: str
    from_submission: Callable[[str], str | None] | None = None
    limit: int = 25  # candidates considered (the ones changed last); older ones are abandoned attempts

    def parse_submission(self, text: str) -> str | None:
        """The candidate id named by a submission text."""
        if self.from_submission is not None:
            return self.from_submission(text)
        text = text.strip()
        return text.split()[0] if text else None


@dataclass(frozen=True)
class Grader:
    """An environment's criteria, with weights, a description and (optionally) its candidates."""

    criteria: tuple[Criterion, ...]
    description: str = ""
    candidates: Candidates | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "criteria", tuple(self.criteria))
        if not self.criteria:
            raise ValueError("a grader needs at least one criterion")
        names = [c.name for c in self.criteria]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"criterion names must be unique; repeated: {', '.join(dupes)}")

    @property
    def total_weight(self) -> float:
        return sum(c.weight for c in self.criteria)

    def criterion(self, name: str) -> Criterion:
        """The criterion called ``name`` (KeyError if none)."""
        for c in self.criteria:
            if c.name == name:
                return c
        raise KeyError(name)

    def per_candidate(self, c: Criterion) -> bool:
        """Whether ``c`` is checked once per candidate object."""
        if self.candidates is None:
            return False
        return True if c.per_candidate is None else c.per_candidate

    def score(self, statuses: Mapping[str, str]) -> float:
        """Weighted share of criteria whose status is pass."""
        return sum(c.weight for c in self.criteria if statuses.get(c.name) == PASS) / self.total_weight


class GradingView:
    """What a check knows besides the context: the Stripe objects seen so far and what it is judging.

    ``objects`` maps an object type to ``{id: latest data}`` as the bus reported them (use the
    SDK for fresh state); ``candidate`` is the id being judged (None without candidates);
    ``final`` is True at the end of the episode; ``trigger`` names what caused this check.
    """

    def __init__(self, objects: Mapping[str, Mapping[str, dict[str, Any]]], candidate: str | None = None,
                 final: bool = False, trigger: str = "") -> None:
        self.objects = objects
        self.candidate = candidate
        self.final = final
        self.trigger = trigger

    def of_type(self, object_type: str) -> dict[str, dict[str, Any]]:
        """``{id: data}`` of every object of ``object_type`` seen so far (oldest first)."""
        return dict(self.objects.get(object_type, {}))

    def get(self, object_id: str) -> dict[str, Any] | None:
        """The latest data seen for ``object_id`` (None if never seen)."""
        for by_id in self.objects.values():
            if object_id in by_id:
                return by_id[object_id]
        return None

    @property
    def candidate_data(self) -> dict[str, Any] | None:
        """The latest data seen for the candidate (may be older than the API's)."""
        return self.get(self.candidate) if self.candidate else None


def error_outcome(exc: BaseException) -> Outcome:
    """The outcome of a check that raised: status error, never pass."""
    text = f"{type(exc).__name__}: {exc}".strip().rstrip(":")
    return Outcome(ERROR, {"error": text[:500]}, f"the check raised {text[:200]}")


__all__ = [
    "ANY_OBJECT",
    "Candidates",
    "Check",
    "Criterion",
    "ERROR",
    "FAIL",
    "Grader",
    "GradingView",
    "Outcome",
    "PASS",
    "PENDING",
    "error_outcome",
    "expect",
    "failed",
    "first_id",
    "passed",
    "pending",
]
