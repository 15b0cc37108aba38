"""Running a grader's checks and choosing what to report: per-candidate results, the best candidate, the score.

``Evaluator`` keeps the latest ``Outcome`` of every (criterion, candidate) pair
it has checked and the Stripe objects seen so far. ``report()`` turns that into
one ``Outcome`` per criterion: per-candidate criteria speak for the candidate
with the most passing weight (ties go to the one changed last), and their evidence names
it. Live grading (``live``) and ``stripebench grade`` both use it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Iterable
from dataclasses import dataclass
from typing import Any, cast

from stripebench_tui.core.events import ERROR, FAIL, PASS, PENDING, StripeObject
from stripebench_tui.grading.context import GradingContext
from stripebench_tui.grading.criteria import Criterion, Grader, GradingView, Outcome, error_outcome

NO_CANDIDATE = None  # the key of criteria that are not per-candidate


@dataclass(frozen=True)
class Reported:
    """One criterion's reported result: its outcome and the candidate it speaks for."""

    criterion: Criterion
    outcome: Outcome
    candidate: str | None

    @property
    def status(self) -> str:
        return self.outcome.status

    def evidence(self) -> dict[str, Any]:
        """The verdict's evidence: the check's evidence plus the chosen candidate and the summary line."""
        ev: dict[str, Any] = {}
        if self.candidate is not None:
            ev["candidate"] = self.candidate
        ev.update(self.outcome.evidence)
        if self.outcome.summary:
            ev.setdefault("summary", self.outcome.summary)
        # Evidence goes into the trace as JSON: anything else (an SDK object, a Decimal) becomes plain data or text.
        return json.loads(json.dumps(ev, default=str))


class Evaluator:
    """A grader's state for one episode: objects seen, outcomes per (criterion, candidate)."""

    def __init__(self, grader: Grader, ctx: GradingContext) -> None:
        self.grader = grader
        self.ctx = ctx
        self.objects: dict[str, dict[str, dict[str, Any]]] = {}
        self.deleted: set[str] = set()
        self.results: dict[str | None, dict[str, Outcome]] = {}

    # ---- what has been seen ----

    def see(self, ev: StripeObject) -> bool:
        """Remember an object from the bus; True when it is a candidate not seen before."""
        by_id = self.objects.setdefault(ev.object_type, {})
        new = ev.object_id not in by_id
        if ev.change == "deleted":
            self.deleted.add(ev.object_id)
        previous = by_id.pop(ev.object_id, None)  # re-inserted so the order is "most recently changed last"
        by_id[ev.object_id] = ev.data or previous or {"id": ev.object_id}
        spec = self.grader.candidates
        return new and spec is not None and spec.object_type == ev.object_type

    def submitted_id(self) -> tuple[bool, str | None]:
        """(whether a submission exists, the candidate id it names)."""
        spec = self.grader.candidates
        text = self.ctx.submission()
        if text is None or spec is None:
            return False, None
        return True, spec.parse_submission(text)

    def candidates(self) -> list[str]:
        """Ids to judge: the submitted one if there is a submission, else those seen (changed last = last)."""
        spec = self.grader.candidates
        if spec is None:
            return []
        has_submission, submitted = self.submitted_id()
        if has_submission:
            return [submitted] if submitted else []
        seen = [i for i in self.objects.get(spec.object_type, {}) if i not in self.deleted]
        return seen[-spec.limit:]

    # ---- checking ----

    def snapshot(self) -> dict[str, dict[str, dict[str, Any]]]:
        """The objects seen so far, copied: checks run in threads while the bus keeps adding objects."""
        return {kind: dict(by_id) for kind, by_id in self.objects.items()}

    async def check(self, criterion: Criterion, candidate: str | None, *, final: bool, trigger: str,
                    objects: dict[str, dict[str, dict[str, Any]]] | None = None) -> Outcome:
        """Run one check; an exception or a wrong return value becomes an ``error`` outcome, never a pass."""
        view = GradingView(self.snapshot() if objects is None else objects, candidate, final, trigger)

        async def call() -> Any:
            if criterion.is_async:
                return await cast(Awaitable[Outcome], criterion.check(self.ctx, view))
            got = await asyncio.to_thread(criterion.check, self.ctx, view)
            return await got if asyncio.iscoroutine(got) else got  # a sync wrapper around an async check

        try:
            got = await asyncio.wait_for(call(), criterion.timeout)
            if not isinstance(got, Outcome):
                raise TypeError(f"check returned {type(got).__name__}, not an Outcome")
        except TimeoutError:
            # A thread cannot be killed; the stuck check is abandoned and reported, never counted as a pass.
            got = Outcome(ERROR, {"error": f"timed out after {criterion.timeout:g}s"},
                          f"the check took longer than {criterion.timeout:g}s")
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - a grader's bug is reported as an error verdict
            got = error_outcome(exc)
        if final and got.status == PENDING:
            got = Outcome(FAIL, got.evidence, (got.summary + "; " if got.summary else "") + "still pending at the end")
        return got

    async def run(self, pairs: Iterable[tuple[Criterion, str | None]], *, final: bool, trigger: str) -> None:
        """Check every (criterion, candidate) pair concurrently and keep the outcomes."""
        named = list(dict.fromkeys((c.name, cand) for c, cand in pairs))
        if not named:
            return
        objects = self.snapshot()
        try:
            outcomes = await asyncio.gather(
                *(self.check(self.grader.criterion(name), cand, final=final, trigger=trigger, objects=objects)
                  for name, cand in named)
            )
        finally:
            await self.ctx.end_evaluation()
        for (name, cand), outcome in zip(named, outcomes, strict=True):
            self.results.setdefault(cand, {})[name] = outcome

    def pairs(self, criteria: Iterable[Criterion], candidates: Iterable[str] | None = None) -> list[tuple[Criterion, str | None]]:
        """(criterion, candidate) pairs to check: per-candidate criteria × ``candidates`` (default: all current)."""
        current = self.candidates()
        cands = current if candidates is None else [c for c in dict.fromkeys(candidates) if c in set(current)]
        out: list[tuple[Criterion, str | None]] = []
        for c in criteria:
            if self.grader.per_candidate(c):
                out.extend((c, cand) for cand in cands)
            else:
                out.append((c, NO_CANDIDATE))
        return out

    async def final(self) -> dict[str, Reported]:
        """Check everything once more, final: pending becomes fail.

        Final-only criteria (slow: a browser flow) run for the best candidate only, chosen by the others.
        """
        live = [c for c in self.grader.criteria if not c.final_only]
        late = [c for c in self.grader.criteria if c.final_only]
        await self.run(self.pairs(live), final=True, trigger="final")
        if late:
            best = self.best_candidate()
            await self.run(self.pairs(late, [best] if best else []), final=True, trigger="final")
        return self.report(final=True)

    # ---- reporting ----

    def best_candidate(self) -> str | None:
        """The current candidate with the most passing weight (ties: the one changed last)."""
        best, best_weight = None, -1.0
        for cand in self.candidates():
            got = self.results.get(cand, {})
            weight = sum(c.weight for c in self.grader.criteria if got.get(c.name, _UNCHECKED).status == PASS)
            if weight >= best_weight:
                best, best_weight = cand, weight
        return best

    def report(self, *, final: bool = False) -> dict[str, Reported]:
        """One reported result per criterion, in the grader's order."""
        best = self.best_candidate()
        out: dict[str, Reported] = {}
        for c in self.grader.criteria:
            if not self.grader.per_candidate(c):
                out[c.name] = Reported(c, self.results.get(NO_CANDIDATE, {}).get(c.name, _UNCHECKED), None)
            elif best is None:
                out[c.name] = Reported(c, self._no_candidate(final), None)
            else:
                out[c.name] = Reported(c, self.results.get(best, {}).get(c.name, _UNCHECKED), best)
        return out

    def _no_candidate(self, final: bool) -> Outcome:
        spec = self.grader.candidates
        assert spec is not None
        has_submission, _ = self.submitted_id()
        if has_submission:
            summary = f"the submission names no {spec.object_type}"
            evidence: dict[str, Any] = {"submission": (self.ctx.submission() or "")[:200]}
        else:
            summary = f"no {spec.object_type} seen" + (" by the end" if final else " yet")
            evidence = {"candidates": 0}
        return Outcome(FAIL if final else PENDING, evidence, summary)

    def score(self, report: dict[str, Reported]) -> float:
        """Weighted share of passing criteria in ``report``."""
        return self.grader.score({name: r.status for name, r in report.items()})


_UNCHECKED = Outcome(PENDING, {}, "not checked yet")

__all__ = ["Evaluator", "Reported"]
