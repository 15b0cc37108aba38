"""External graders: a command (pytest, RSpec, a script) whose per-test report becomes the criteria.

A benchmark folder's grader (``envs.benchfolder``) is one. Each test becomes a criterion of weight 1 named after
it, passing when the test passed, with the failure message as evidence; skipped tests do not count. A grader
that crashes, times out or prints garbage is one ``error`` criterion (``GRADER_RUN``) with its output's tail,
never a pass; a malformed submission fails without running the grader.

Live (``ExternalLiveGrading``, the same hooks as ``live.LiveGrading``): the grader runs at the start, again when
the submission file changes (looked at after every tool result and turn end) or a Stripe object it watches
appears, debounced, never two runs at once (a change during a run queues one more), killed at the episode's end,
and always once more at the end for the final verdicts.
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stripebench_tui.child_env import base_env
from stripebench_tui.core.bus import EventBus, Subscription
from stripebench_tui.core.driver import Driver, FinalScore
from stripebench_tui.core.events import ERROR, FAIL, PASS, Event, GraderVerdict, StripeObject, ToolResult
from stripebench_tui.core.profile import GRADING, harness_part
from stripebench_tui.envs.ruby_gems import GemBundle, bundle_of
from stripebench_tui.envs.workspace import services_view
from stripebench_tui.grading.context import GradingContext
from stripebench_tui.grading.criteria import Criterion, Outcome
from stripebench_tui.grading.evaluate import Evaluator, Reported
from stripebench_tui.grading.external_reports import PASSED, SKIPPED, criterion_name
from stripebench_tui.grading.external_run import GraderRun, RunResult
from stripebench_tui.grading.live import LiveGrading
from stripebench_tui.preload import REQUEST_SOURCE_VAR, preload_env

log = logging.getLogger(__name__)

GRADER_RUN = "grader run"  # the criterion that stands for the run itself when it reported no tests


# Any: never called; it only fills a Criterion's check slot
def _not_a_check(ctx: Any, view: Any) -> Outcome:  # pragma: no cover - external criteria are never called
    raise RuntimeError("an external grader's criteria are judged by its report, not checked one by one")


@dataclass(frozen=True)
class ExternalGrader:
    """An environment's external grader: the spec, the folder it comes from and the problem it grades."""

    spec: Any  # envs.bench_overlay.ExternalGraderSpec
    folder: Path
    problem: str = ""
    criteria: tuple[Criterion, ...] = ()  # not known before it runs: the report names them
    description: str = ""

    # Any: an Environment, or a test's stand-in with the same fields
    @classmethod
    def for_env(cls, env: Any) -> ExternalGrader:
        spec = env.external_grader
        return cls(spec, env.folder, env.problem or "", description=f"external grader: {spec.command}")

    def grader_run(self, ctx: GradingContext, work: Path) -> GraderRun:
        """A runner for this grader in ``ctx``'s episode, working in ``work``."""
        env = {**base_env(), **{k: v for k, v in ctx.env_vars.items() if isinstance(v, str)}}
        env["STRIPE_SECRET_KEY"] = env["STRIPE_API_KEY"] = ctx.stripe_api_key
        env["STRIPE_API_BASE"] = ctx.stripe_api_base or "https://api.stripe.com"
        if ctx.env.manifest.stripe_preload:  # an unmodified grader finds the emulator as the app does
            env.update(preload_env(env))
            env[REQUEST_SOURCE_VAR] = "grader"  # the request log's source: the Ruby preload marks its requests
        app_gems = getattr(ctx.processes, "ruby_env", None) or {}
        if app_gems.get("GEM_HOME"):  # the app's gems ([ruby]), for a grader that asks bundler about the app
            env["APP_GEM_HOME"] = app_gems["GEM_HOME"]
        source = self.folder / Path(self.spec.cwd).parts[0]
        return GraderRun(self.spec, source, work, ctx.workspace, env, ctx.submission_path, self.problem,
                         gems=self.gem_bundle(), link_to=services_view(ctx.env, ctx.workspace))

    def gem_bundle(self) -> GemBundle | None:
        """The grader's Gemfile, as ``envs.ruby_gems`` installs it (None for a grader that asks for none)."""
        gems = self.spec.gems
        if gems is None:
            return None
        return bundle_of(self.folder, gems.gemfile, gems.lockfile, gems.use_lock)


def outcomes(result: RunResult, submission_path: Path | None) -> dict[str, Reported]:
    """The criteria a run reports, in the report's order (skipped tests left out)."""
    note = {} if result.submission is not None or submission_path is None else {"submission": f"{submission_path.name} is absent"}
    if result.invalid:
        c = _criterion(GRADER_RUN, "the submission can be read")
        return {GRADER_RUN: Reported(c, Outcome(FAIL, {"submission": result.invalid}, result.invalid), None)}
    tests = [t for t in result.tests if t.outcome != SKIPPED]
    if result.error or not tests:
        error = result.error or "every test in the report was skipped"
        c = _criterion(GRADER_RUN, "the grader runs and reports its tests")
        return {GRADER_RUN: Reported(c, Outcome(ERROR, {"error": error, "output": result.output, **note}, error), None)}
    out: dict[str, Reported] = {}
    for t in tests:
        name = criterion_name(t.name)
        if name in out:  # the same test name in two files: keep both, by their full ids
            name = criterion_name(t.detail or f"{t.name} {len(out)}")
        evidence: dict[str, Any] = {"test": t.detail or t.name, "outcome": t.outcome, **note}
        if t.message:
            evidence["message"] = t.message
        if t.score is not None:
            evidence["score"] = t.score
        status = PASS if t.outcome == PASSED else (ERROR if t.outcome == "error" else FAIL)
        summary = "passed" if status == PASS else (t.message.strip().splitlines()[0][:200] if t.message.strip() else t.outcome)
        out[name] = Reported(_criterion(name, t.detail or t.name), Outcome(status, evidence, summary), None)
    return out


def _criterion(name: str, description: str) -> Criterion:
    return Criterion(name=name, weight=1.0, description=description or name, check=_not_a_check)


def score_of(report: dict[str, Reported]) -> float:
    """Share of the reported criteria that pass (a lone GRADER_RUN criterion scores 0)."""
    return sum(1 for r in report.values() if r.status == PASS) / len(report) if report else 0.0


class ExternalEvaluator:
    """``Evaluator``'s surface for ``stripebench grade``: one final run of the grader."""

    def __init__(self, grader: ExternalGrader, ctx: GradingContext) -> None:
        self.grader, self.ctx = grader, ctx

    def see(self, ev: StripeObject) -> bool:
        return False  # the grader reads Stripe itself

    async def final(self) -> dict[str, Reported]:
        with tempfile.TemporaryDirectory(prefix="stripebench-grader-") as work:
            runner = self.grader.grader_run(self.ctx, Path(work))
            return outcomes(await runner.run(), runner.submission_path)

    def score(self, report: dict[str, Reported]) -> float:
        return score_of(report)


class ExternalLiveGrading:
    """One episode's live external grader; wired like ``live.LiveGrading`` (attach, turn end, final, close)."""

    # Any: an ExternalRun, or a test's stand-in for one
    def __init__(self, grader: ExternalGrader, ctx: GradingContext, runner: Any = None) -> None:
        self.grader, self.ctx = grader, ctx
        self.runner = runner or grader.grader_run(ctx, ctx.episode_dir / "grader-runs")
        self.spec = grader.spec
        self.bus: EventBus | None = None
        self.published: dict[str, tuple[str, float, dict[str, Any]]] = {}
        self.final_report: dict[str, Reported] | None = None
        self.runs_started = 0
        self._sub: Subscription | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None
        self._again = False
        self._trigger = "start"
        self._seen: tuple[int, int] | None = None
        self._finishing = False
        self._idle = asyncio.Event()
        self._idle.set()

    def attach(self, bus: EventBus) -> ExternalLiveGrading:
        """Subscribe to ``bus`` and start the first run (the untouched workspace's verdicts)."""
        self.bus = bus
        self._sub = bus.subscribe(self._on_event, name="external-grading")
        self._seen = self.runner.fingerprint()
        if self.spec.live:
            self._poke("start", delay=0)
        return self

    @harness_part(GRADING)
    async def turn_end_hook(self, driver: Driver) -> None:
        """A turn ended: re-run if the submission changed (without waiting for the run)."""
        self._check_submission()

    async def idle(self) -> None:
        """Wait until no run is pending or running (tests, benchmarks)."""
        await self._idle.wait()

    # ---- triggers ----

    def _on_event(self, ev: Event) -> None:
        if isinstance(ev, ToolResult):
            self._check_submission()
        elif isinstance(ev, StripeObject) and ev.object_type and ("*" in self.spec.on or ev.object_type in self.spec.on):
            self._poke(ev.event_id or ev.object_id)

    def _check_submission(self) -> None:
        now = self.runner.fingerprint()
        if now != self._seen:
            self._seen = now
            self._poke("submission")

    def _poke(self, trigger: str, delay: float | None = None) -> None:
        if self._finishing or not self.spec.live:
            return
        self._trigger = trigger
        self._idle.clear()
        if self._timer is not None:
            self._timer.cancel()  # debounced: a burst of changes costs one run, after the last
        self._timer = asyncio.get_running_loop().call_later(self.spec.debounce if delay is None else delay, self._kick)

    def _kick(self) -> None:
        self._timer = None
        if self._finishing:
            return
        if self._task is not None and not self._task.done():
            self._again = True  # never two at once: one more run after this one
            return
        self._task = asyncio.get_running_loop().create_task(self._live_runs(), name="external-grader")

    async def _live_runs(self) -> None:
        try:
            while True:
                self._again = False
                trigger = self._trigger
                self.runs_started += 1
                result = await self.runner.run()
                if self._finishing:
                    return
                await self._publish(outcomes(result, self.runner.submission_path), trigger=trigger, final=False)
                if not self._again:
                    return
        except asyncio.CancelledError:
            raise
        except Exception:  # a bug here must not end the episode; the final run reports
            log.exception("external grader run failed")
        finally:
            if self._timer is None and not self._again:
                self._idle.set()

    # ---- the end ----

    async def _stop_runs(self) -> None:
        self._finishing = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._task is not None and not self._task.done():
            self._task.cancel()  # kills the grader process group
            await asyncio.gather(self._task, return_exceptions=True)
        self._idle.set()

    @harness_part(GRADING)
    async def final_hook(self, driver: Driver | None = None) -> FinalScore:
        """Stop any live run, run once more for the final verdicts, publish them all and return the score."""
        await self._stop_runs()
        self.runs_started += 1
        report = outcomes(await self.runner.run(), self.runner.submission_path)
        self.final_report = report
        if self.bus is not None:
            await self._publish(report, trigger="final", final=True, turn=driver.turn if driver is not None else None)
        if self._sub is not None:
            self._sub.detach("episode graded")
        score = score_of(report)
        return FinalScore(score=score, passed=score == 1.0)

    async def close(self) -> None:
        """Stop any run and unsubscribe (the final hook does this too)."""
        await self._stop_runs()
        if self._sub is not None:
            self._sub.detach("closed")

    async def _publish(self, report: dict[str, Reported], *, trigger: str, final: bool, turn: int | None = None) -> None:
        assert self.bus is not None
        verdicts = [(r.criterion.name, r.status, 1.0, r.criterion.description, r.evidence()) for r in report.values()]
        # Criteria an earlier run reported and this one does not (the run's own, once tests report) stop counting.
        for name, (_status, weight, _evidence) in self.published.items():
            if name not in report and (weight > 0 or final):
                gone = "the grader reported tests" if name == GRADER_RUN else "not in the grader's latest report"
                verdicts.append((name, PASS if name == GRADER_RUN else FAIL, 0.0, gone, {"summary": gone}))
        for name, status, weight, description, evidence in verdicts:
            if not final and self.published.get(name) == (status, weight, evidence):
                continue
            self.published[name] = (status, weight, evidence)
            ev = GraderVerdict(criterion=name, status=status, weight=weight, description=description,
                               evidence=evidence, trigger=trigger, final=final)
            await self.bus.publish(ev, turn=turn) if turn is not None else await self.bus.publish(ev)


# Any: any loaded grader, ours (Grader) or a folder's (ExternalGrader)
def is_external(grader: Any) -> bool:
    return isinstance(grader, ExternalGrader)


# Any: any loaded grader, ours (Grader) or a folder's (ExternalGrader)
def live_grading_for(grader: Any, ctx: GradingContext) -> Any:
    """The live grading of ``grader``: ``ExternalLiveGrading`` for a command, ``LiveGrading`` for criteria."""
    if is_external(grader):
        return ExternalLiveGrading(grader, ctx)
    return LiveGrading(grader, ctx)


# Any: any loaded grader, ours (Grader) or a folder's (ExternalGrader)
def evaluator_for(grader: Any, ctx: GradingContext) -> Any:
    """The one-off evaluator of ``grader`` (``stripebench grade``)."""
    if is_external(grader):
        return ExternalEvaluator(grader, ctx)
    return Evaluator(grader, ctx)


__all__ = ["ExternalEvaluator", "ExternalGrader", "ExternalLiveGrading", "GRADER_RUN", "evaluator_for", "is_external",
           "live_grading_for", "outcomes", "score_of"]
