"""Criteria, outcomes and graders: validation, weights and scores."""

from __future__ import annotations

import pytest

from stripebench_tui.grading import FAIL, PASS, PENDING, Candidates, Criterion, Grader, Outcome, expect, first_id


def ok(ctx, view):
    return Outcome(PASS)


def test_outcome_refuses_an_unknown_status():
    with pytest.raises(ValueError, match="unknown verdict status 'passed'"):
        Outcome("passed")


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"weight": 0}, "weight must be a positive number"),
        ({"weight": True}, "weight must be a positive number"),
        ({"description": "  "}, "give a description"),
        ({"name": ""}, "criterion name"),
        ({"name": "bad/name"}, "criterion name"),
        ({"check": "not callable"}, "check must be callable"),
    ],
)
def test_a_criterion_is_checked_when_made(kwargs, message):
    args = {"name": "paid", "weight": 1, "description": "The session is paid.", "check": ok} | kwargs
    with pytest.raises(ValueError, match=message):
        Criterion(**args)


def test_on_accepts_a_lone_type_and_final_only_never_watches():
    c = Criterion("paid", 1, "Paid.", ok, on="checkout.session")
    assert c.on == ("checkout.session",)
    assert c.watches("checkout.session") and not c.watches("customer")
    assert Criterion("any", 1, "Any.", ok, on=("*",)).watches("customer")
    assert not Criterion("late", 1, "Late.", ok, on=("*",), final_only=True).watches("customer")


def test_grader_names_must_be_unique_and_it_needs_criteria():
    with pytest.raises(ValueError, match="repeated: a"):
        Grader((Criterion("a", 1, "A.", ok), Criterion("a", 2, "A again.", ok)))
    with pytest.raises(ValueError, match="at least one criterion"):
        Grader(())


def test_score_is_the_weighted_share_of_passes():
    g = Grader((Criterion("a", 3, "A.", ok), Criterion("b", 1, "B.", ok), Criterion("c", 1, "C.", ok)))
    assert g.score({"a": PASS, "b": FAIL, "c": PENDING}) == pytest.approx(0.6)
    assert g.score({"a": PASS, "b": PASS, "c": PASS}) == 1.0
    assert g.score({}) == 0.0


def test_per_candidate_defaults_to_the_graders_candidates():
    app = Criterion("app", 1, "The app answers.", ok, per_candidate=False)
    paid = Criterion("paid", 1, "Paid.", ok)
    with_candidates = Grader((app, paid), candidates=Candidates("checkout.session"))
    assert not with_candidates.per_candidate(app) and with_candidates.per_candidate(paid)
    assert not Grader((paid,)).per_candidate(paid)


def test_expect_records_expected_and_actual():
    good, bad = expect("mode", "payment", "payment"), expect("mode", "payment", "setup", id="cs_1")
    assert good.status == PASS and good.evidence == {"expected": "payment", "actual": "payment"}
    assert bad.status == FAIL and bad.evidence == {"expected": "payment", "actual": "setup", "id": "cs_1"}
    assert "expected 'payment'" in bad.summary


def test_submission_parsers():
    assert first_id("cs_")("the session is cs_test_a1B2 done") == "cs_test_a1B2"
    assert first_id("cs_")("nothing here") is None
    assert Candidates("checkout.session").parse_submission("  cs_123 \n") == "cs_123"
    assert Candidates("checkout.session").parse_submission("   ") is None
