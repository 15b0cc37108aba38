"""External graders' reports become tests with names, outcomes and messages; garbage is an error, never a pass."""

from __future__ import annotations

import json

import pytest

from stripebench_tui.grading.external_reports import (
    ERRORED,
    FAILED,
    PASSED,
    SKIPPED,
    ReportError,
    criterion_name,
    parse_report,
)

JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="4">
<testcase classname="checkout_tests" name="test_mode" time="0.01"/>
<testcase classname="checkout_tests" name="test_prices"><failure message="assert 899 == 1899">item = {...}
E   assert 899 == 1899</failure></testcase>
<testcase classname="checkout_tests" name="test_setup"><error message="fixture 'x' not found">boom</error></testcase>
<testcase classname="checkout_tests" name="test_invoice"><skipped message="needs --invoice-id"/></testcase>
</testsuite></testsuites>"""


def test_junit() -> None:
    got = parse_report(JUNIT)
    assert [(t.name, t.outcome) for t in got] == [("test_mode", PASSED), ("test_prices", FAILED),
                                                   ("test_setup", ERRORED), ("test_invoice", SKIPPED)]
    assert "assert 899 == 1899" in got[1].message and got[1].detail == "checkout_tests::test_prices"


def test_pytest_json_report() -> None:
    data = {"created": 1, "summary": {"total": 2}, "tests": [
        {"nodeid": "checkout_tests.py::test_mode", "outcome": "passed", "call": {"outcome": "passed"}},
        {"nodeid": "checkout_tests.py::test_discounts", "outcome": "failed",
         "call": {"outcome": "failed", "crash": {"message": "KeyError: 'discounts'"}, "longrepr": "long KeyError: 'discounts'"}},
    ]}
    got = parse_report(json.dumps(data))
    assert [(t.name, t.outcome) for t in got] == [("test_mode", PASSED), ("test_discounts", FAILED)]
    assert "KeyError" in got[1].message


def test_rspec_json() -> None:
    data = {"version": "3.13", "examples": [
        {"id": "./grade.rb[1:1]", "full_description": "POST /payments returns the charge", "status": "passed"},
        {"id": "./grade.rb[1:2]", "full_description": "GET /receipt has latest_charge", "status": "failed",
         "exception": {"class": "RSpec::Expectations::ExpectationNotMetError", "message": "expected 200, got 500"}},
        {"id": "./grade.rb[1:3]", "full_description": "later", "status": "pending"},
    ], "summary": {"example_count": 3}}
    got = parse_report(json.dumps(data), "rspec-json")
    assert [t.outcome for t in got] == [PASSED, FAILED, SKIPPED] and "expected 200, got 500" in got[1].message


@pytest.mark.parametrize("doc, expected", [
    ({"score": 1.0}, [("score", PASSED)]),
    ({"score": 0.25}, [("score", FAILED)]),
    ([{"challenge_name": "basic", "score": 1.0}, {"challenge_name": "trial", "score": 0.5, "matched": 1, "total": 2}],
     [("basic", PASSED), ("trial", FAILED)]),
    ({"results": [{"name": "a", "passed": True}, {"name": "b", "status": "fail"}]}, [("a", PASSED), ("b", FAILED)]),
    ({"refunds": True, "webhooks": 0.0}, [("refunds", PASSED), ("webhooks", FAILED)]),
])
def test_score_json_shapes(doc: object, expected: list[tuple[str, str]]) -> None:
    got = parse_report("checking…\n" + json.dumps(doc, indent=2), "auto")  # scripts often print a line first
    assert [(t.name, t.outcome) for t in got] == expected


@pytest.mark.parametrize("text, kind", [
    ("", "auto"), ("Traceback (most recent call last):\n  oops", "auto"), ("<not xml", "junit"),
    ("[]", "score-json"), ('{"tests": "x", "summary": {}}', "auto"), ('[1, 2]', "score-json"),
    ('{"a": "yes"}', "score-json"),
])
def test_garbage_is_a_report_error(text: str, kind: str) -> None:
    with pytest.raises(ReportError):
        parse_report(text, kind)


def test_criterion_names_fit_the_criterion_rule() -> None:
    from stripebench_tui.grading.criteria import Criterion

    for raw in ["checkout_tests.py::test_x[SAVE20-0.2]", "#create returns 'ok' (200)", "__init__", "é"]:
        name = criterion_name(raw)
        Criterion(name=name, weight=1, description="d", check=lambda c, v: None)  # raises if the name is not allowed
    assert criterion_name("checkout_tests.py::test_x[SAVE20]") == "checkout_tests.py test_x SAVE20"
