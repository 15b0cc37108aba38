"""Scenario outcomes: Miss fails with its evidence, an unanswering app fails, anything else is an error."""

from __future__ import annotations

import httpx
import pytest

from stripebench_tui.core.events import ERROR, FAIL, PASS
from stripebench_tui.grading import GradingUnavailable, passed
from stripebench_tui.grading.app_copy import AppDown
from stripebench_tui.grading.scenarios import Miss, need, outcome_of, run_scenarios, setup_outcome, with_run


def test_need_raises_miss_with_evidence_only_when_not_ok():
    need(True, "fine")
    with pytest.raises(Miss) as info:
        need(False, "charged twice", order="o1")
    assert (info.value.summary, info.value.evidence) == ("charged twice", {"order": "o1"})


def test_outcomes_of_what_a_scenario_raised():
    miss = outcome_of(Miss("charged twice", order="o1"))
    assert (miss.status, miss.summary, miss.evidence) == (FAIL, "charged twice", {"order": "o1"})
    down = outcome_of(httpx.ConnectError("refused"), "shop")
    assert down.status == FAIL and down.summary == "the shop did not answer: ConnectError: refused"
    assert outcome_of(KeyError("bug")).status == ERROR
    assert setup_outcome(AppDown("did not become healthy")).summary == "cannot grade: did not become healthy"
    assert setup_outcome(GradingUnavailable("no database")).status == FAIL
    assert setup_outcome(ValueError("bug")).status == ERROR


def test_run_scenarios_goes_on_after_one_raises_and_keeps_what_a_scenario_answered():
    def boom(run):
        raise KeyError("grader bug")

    def two(run):
        return {"a": passed("a"), "b": passed("b")}

    results = run_scenarios("run", [(("x",), boom), (("a", "b"), two), (("c",), lambda run: passed(run))])
    assert results["x"].status == ERROR and "grader bug" in results["x"].summary
    assert [results[n].status for n in "abc"] == [PASS, PASS, PASS] and results["c"].summary == "run"


class Closing:
    closed = False

    def close(self):
        self.closed = True


def test_with_run_closes_the_run_even_when_the_body_raises_and_a_failed_start_fails_every_name():
    run = Closing()
    assert with_run(None, lambda ctx: run, ["a"], lambda r: {"a": passed()})["a"].status == PASS and run.closed
    run = Closing()
    with pytest.raises(RuntimeError):
        with_run(None, lambda ctx: run, ["a"], lambda r: (_ for _ in ()).throw(RuntimeError("body")))
    assert run.closed

    def cannot(ctx):
        raise GradingUnavailable("no app")

    results = with_run(None, cannot, ["a", "b"], lambda r: {})
    assert set(results) == {"a", "b"} and {o.summary for o in results.values()} == {"cannot grade: no app"}
    assert with_run(None, lambda ctx: object(), ["a"], lambda r: {"a": passed()})["a"].status == PASS  # no close()
