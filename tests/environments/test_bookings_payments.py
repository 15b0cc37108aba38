"""bookings-payments: the grader's failure modes, and validate (oracle 1.0, no-op 0, each mutant loses its own criterion)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from stripebench_tui.core.events import ERROR, FAIL, PASS
from stripebench_tui.envs.catalog import find_environment
from stripebench_tui.grading import GradingContext, load_grader

from .helpers import load_grader_module, validate_failing

ENV = find_environment("bookings-payments")
GRADER = load_grader(ENV)


G = load_grader_module(ENV, "bookings_payments.py", "bp_grader_under_test")


def _ctx(tmp_path: Path, app_urls: dict[str, str] | None = None) -> GradingContext:
    return GradingContext(env=ENV, episode_dir=tmp_path, workspace=tmp_path, stripe_api_base="http://127.0.0.1:9",
                          stripe_api_key="sk_test_unused", app_urls=app_urls or {})


def test_scenario_criteria_run_at_the_end_and_the_ledger_live():
    assert [c.name for c in GRADER.criteria] == [name for name, *_ in G.SCENARIOS] + ["bookings match Stripe"]
    assert all(c.final_only for c in GRADER.criteria[:-1])
    assert GRADER.criterion("bookings match Stripe").watches("payment_intent")


def test_without_a_running_app_every_criterion_fails_rather_than_erroring(tmp_path):
    results = G._results(_ctx(tmp_path))
    assert {o.status for o in results.values()} == {FAIL}
    assert "no app URL" in results["full payment"].summary


def test_a_scenario_that_raises_is_an_error_and_the_others_still_run(tmp_path, monkeypatch):
    import sqlite3

    conn = sqlite3.connect(tmp_path / "bookings.db")
    conn.execute("CREATE TABLE classes (id TEXT, price INTEGER, currency TEXT, min_deposit INTEGER)")
    conn.execute("INSERT INTO classes VALUES ('reformer-pilates', 3500, 'usd', 1000)")
    conn.commit()
    conn.close()

    def boom(run):
        raise KeyError("grader bug")

    def fine(run):
        return G.passed("ok")

    monkeypatch.setattr(G, "SCENARIOS", [("a", 1, "d", boom), ("b", 1, "d", fine)])
    ctx = _ctx(tmp_path, {"APP_URL": "http://127.0.0.1:9"})
    monkeypatch.setattr(type(ctx), "stripe", property(lambda self: SimpleNamespace(v1=None)))
    results = G._results(ctx)
    assert results["a"].status == ERROR and "grader bug" in results["a"].summary
    assert results["b"].status == PASS
    assert G._results(ctx) is results  # one run per grading context


@pytest.mark.drill
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_validate_oracle_passes_noop_scores_zero_and_each_mutant_fails_for_its_own_reason():
    failing = validate_failing(ENV)
    assert failing["oracle"] == set()
    assert failing["no-op"] == {c.name for c in GRADER.criteria}
    assert failing["mutant refund-400-as-success"] == {"refunds", "bookings match Stripe"}
    assert failing["mutant decline-keeps-booking"] == {"declines", "bookings match Stripe"}
    assert failing["mutant zero-amount-payment-intent"] == {"save card only", "bookings match Stripe"}
    assert failing["mutant partner-refundable"] == {"partner refunds refused"}


def test_the_ledger_flags_rows_stripe_does_not_back(tmp_path):
    import sqlite3

    import stripe

    from stripebench_emulator import running_emulator
    from stripebench_tui.core.events import PENDING
    from stripebench_tui.grading import GradingView

    with running_emulator() as emu:
        ctx = _ctx(tmp_path)
        ctx.stripe_api_base = emu.url
        view = GradingView({})
        conn = sqlite3.connect(tmp_path / "bookings.db")
        conn.executescript(G_SCHEMA)
        conn.commit()
        assert G.ledger(ctx, view).status == PENDING
        api = stripe.StripeClient("sk_test_ledger", base_addresses={"api": emu.url}).v1
        pi = api.payment_intents.create(params={"amount": 1000, "currency": "usd", "payment_method": "pm_card_visa",
                                                "confirm": True, "payment_method_types": ["card"]})
        conn.execute("INSERT INTO bookings (id, status, amount_paid, amount_refunded, payment_intent) VALUES "
                     "('bk_ok', 'deposit_paid', 1000, 0, ?)", (pi.id,))
        conn.commit()
        assert G.ledger(ctx, view).status == PASS
        conn.execute("INSERT INTO bookings (id, status, amount_paid, amount_refunded) VALUES ('bk_bad', 'declined', 0, 0)")
        conn.commit()
        got = G.ledger(ctx, view)
        assert got.status == FAIL and "bk_bad" in got.summary
        conn.close()


G_SCHEMA = """CREATE TABLE bookings (id TEXT, status TEXT, amount_paid INTEGER, amount_refunded INTEGER,
    customer TEXT, payment_intent TEXT, setup_intent TEXT, created_at TEXT DEFAULT CURRENT_TIMESTAMP);"""
