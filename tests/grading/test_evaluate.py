"""Running checks once: errors, pending at the end, candidates and the submission."""

from __future__ import annotations

import asyncio

from stripebench_tui.grading import ERROR, FAIL, PASS, PENDING, Criterion, Evaluator, Grader, Outcome, first_id, passed

from .helpers import checkout_grader, session


async def test_a_check_that_raises_is_an_error_never_a_pass(ctx):
    def boom(ctx, view):
        raise KeyError("line_items")

    async def wrong_type(ctx, view):
        return "pass"  # a string is not an Outcome, however hopeful

    grader = Grader((Criterion("boom", 1, "Raises.", boom), Criterion("wrong", 1, "Returns a string.", wrong_type)))
    report = await Evaluator(grader, ctx).final()
    assert report["boom"].status == ERROR
    assert report["boom"].evidence()["error"] == "KeyError: 'line_items'"
    assert report["wrong"].status == ERROR and "not an Outcome" in report["wrong"].evidence()["error"]


async def test_sync_checks_run_in_threads_and_async_ones_on_the_loop(ctx):
    import threading

    where = {}

    def sync_check(ctx, view):
        where["sync"] = threading.current_thread() is threading.main_thread()
        return passed()

    async def async_check(ctx, view):
        where["async"] = threading.current_thread() is threading.main_thread()
        await asyncio.sleep(0)
        return passed()

    grader = Grader((Criterion("s", 1, "S.", sync_check), Criterion("a", 1, "A.", async_check)))
    evaluator = Evaluator(grader, ctx)
    report = await evaluator.final()
    assert where == {"sync": False, "async": True}
    assert evaluator.score(report) == 1.0


async def test_pending_at_the_end_is_a_fail(ctx):
    grader = Grader((Criterion("later", 1, "Decided later.", lambda c, v: Outcome(PENDING, {"id": "x"}, "not yet")),))
    report = await Evaluator(grader, ctx).final()
    assert report["later"].status == FAIL
    assert report["later"].evidence() == {"id": "x", "summary": "not yet; still pending at the end"}


async def test_the_candidate_with_most_passing_weight_is_reported(ctx):
    evaluator = Evaluator(checkout_grader(), ctx)
    evaluator.see(session("cs_a", mode="payment", payment_status="unpaid"))  # passes mode (weight 1)
    evaluator.see(session("cs_b", mode="setup", payment_status="paid"))  # passes paid (weight 2)
    evaluator.see(session("cs_c", mode="payment", payment_status="unpaid"))  # ties with cs_a, newer
    report = await evaluator.final()
    assert {r.candidate for r in report.values()} == {"cs_b"}
    assert report["paid"].evidence()["candidate"] == "cs_b"
    assert (report["mode"].status, report["paid"].status) == (FAIL, PASS)
    assert evaluator.score(report) == 2 / 3

    evaluator.see(session("cs_b", mode="setup", payment_status="unpaid"))  # cs_b changed: now ties resolve to newest
    report = await evaluator.final()
    assert report["mode"].candidate == "cs_c"


async def test_a_submission_narrows_the_candidates_to_the_submitted_id(ctx):
    evaluator = Evaluator(checkout_grader(from_submission=first_id("cs_")), ctx)
    evaluator.see(session("cs_good", mode="payment", payment_status="paid"))
    evaluator.see(session("cs_bad", mode="setup", payment_status="unpaid"))
    ctx.submission_path.write_text("My answer: cs_bad\n")
    report = await evaluator.final()
    assert report["paid"].candidate == "cs_bad" and evaluator.score(report) == 0.0

    ctx.submission_path.write_text("I could not finish.\n")
    report = await evaluator.final()
    assert report["paid"].status == FAIL
    assert report["paid"].evidence()["summary"] == "the submission names no checkout.session"


async def test_no_candidates_is_pending_live_and_fail_at_the_end(ctx):
    evaluator = Evaluator(checkout_grader(), ctx)
    assert evaluator.report()["paid"].status == PENDING
    report = await evaluator.final()
    assert report["paid"].status == FAIL
    assert report["paid"].evidence() == {"candidates": 0, "summary": "no checkout.session seen by the end"}


async def test_evidence_becomes_plain_json(ctx):
    import decimal

    grader = Grader((Criterion("amount", 1, "Amount.", lambda c, v: passed(amount=decimal.Decimal("1.50"), ids=("a", "b"))),))
    report = await Evaluator(grader, ctx).final()
    assert report["amount"].evidence() == {"amount": "1.50", "ids": ["a", "b"]}


async def test_final_only_criteria_run_once_for_the_best_candidate(ctx):
    from .helpers import is_paid, mode_is_payment

    browsed = []

    def browse(ctx, view):
        browsed.append(view.candidate)
        return passed(session=view.candidate)

    grader = Grader((Criterion("mode", 1, "Mode.", mode_is_payment), Criterion("paid", 2, "Paid.", is_paid),
                     Criterion("browser flow", 5, "The page works.", browse, final_only=True)),
                    candidates=checkout_grader().candidates)
    evaluator = Evaluator(grader, ctx)
    for i in range(5):
        evaluator.see(session(f"cs_{i}", mode="payment", payment_status="paid" if i == 2 else "unpaid"))
    report = await evaluator.final()
    assert browsed == ["cs_2"] and {r.candidate for r in report.values()} == {"cs_2"}
    assert evaluator.score(report) == 1.0
