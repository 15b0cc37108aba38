"""partial-payments: the seed, the grader's judgement on real emulator invoices and sessions, the plans, validate."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest
import stripe

from stripebench_emulator.testing import TEST_KEY, emulator, emulator_server, stripe_client  # noqa: F401 - pytest fixtures, requested by name below
from stripebench_tui.core.events import FAIL, PASS, PENDING
from stripebench_tui.envs.catalog import find_environment
from stripebench_tui.envs.workspace import copy_workspace
from stripebench_tui.grading import GradingContext, GradingView
from tests.environments.helpers import load_grader_module, played_files, run_seed, validate_failing

ENV = find_environment("partial-payments")
G = load_grader_module(ENV, "partial_payments.py", "pp_grader_under_test")
SEED = G.SEED
FIRST, SECOND = SEED.halves()
CARD = {"email": SEED.MEMBER["email"], "card_number": "4242 4242 4242 4242", "expiry": "12 / 34", "cvc": "123",
        "name": "Maya Okafor"}
CRITERIA = {c.name: c.check for c in G.GRADER.criteria}


def test_the_halves_round_the_first_down_and_add_up():
    assert SEED.YEARLY_AMOUNT % 2 == 1  # odd, so rounding matters
    assert (FIRST, SECOND) == (62499, 62500) and FIRST + SECOND == SEED.YEARLY_AMOUNT


@pytest.mark.parametrize("plan", [ENV.manifest.solution] + ENV.manifest.mutants, ids=lambda ref: ref.name)
def test_every_file_edit_in_the_plans_applies_to_the_file_it_edits(plan):
    """Played blind, an edit that matched nothing would leave a mutant identical to the solution."""
    files, edits = played_files(ENV, plan)
    compile(files["app.py"], "app.py", "exec")
    if plan.name != "oracle":
        assert edits and files["app.py"] != ENV.path("solution/files/app.py").read_text()


# ---------------------------------------------------------------- seed and grader on the emulator


def _seed(workspace: Path, url: str, monkeypatch) -> None:
    run_seed(SEED, workspace, url, TEST_KEY, monkeypatch)


@pytest.fixture
def seeded(emulator, stripe_client, tmp_path, monkeypatch):  # noqa: F811 - pytest fixtures
    workspace = tmp_path / "workspace"
    copy_workspace(ENV, workspace)  # with the shared devserver.py
    _seed(workspace, emulator.url, monkeypatch)
    row = sqlite3.connect(workspace / "desk.db").execute(
        "SELECT id, stripe_customer, stripe_invoice FROM members").fetchone()
    ctx = GradingContext(env=ENV, episode_dir=tmp_path, workspace=workspace, stripe_api_base=emulator.url,
                         stripe_api_key=TEST_KEY)
    yield SimpleNamespace(workspace=workspace, ctx=ctx, client=stripe_client, url=emulator.url, member=row[0],
                          customer=row[1], invoice=row[2], monkeypatch=monkeypatch)
    ctx.close()


def _checkout(seeded, amount: int) -> stripe.checkout.Session:
    """A payment-mode session for ``amount`` for the member, paid on its hosted page (the page's own endpoint)."""
    session = seeded.client.v1.checkout.sessions.create(params={
        "mode": "payment", "customer": seeded.customer, "success_url": "http://desk.test/paid?s={CHECKOUT_SESSION_ID}",
        "line_items": [{"quantity": 1, "price_data": {"currency": "usd", "unit_amount": amount,
                                                      "product_data": {"name": "Half"}}}]})
    reply = httpx.post(f"{seeded.url}/_checkout/{session.id}/submit", json=dict(CARD)).json()
    assert reply.get("status") == "complete", reply
    return seeded.client.v1.checkout.sessions.retrieve(session.id)


def _record(seeded, session, remaining: int) -> None:
    with sqlite3.connect(seeded.workspace / "desk.db") as conn:
        conn.execute("INSERT INTO payments (member_id, stripe_invoice, checkout_session, payment_intent, amount,"
                     " amount_remaining, status) VALUES (?, ?, ?, ?, ?, ?, 'paid')",
                     (seeded.member, seeded.invoice, session.id, session.payment_intent, session.amount_total,
                      remaining))


def _half(seeded, amount: int, *, attach: bool = True, record: bool = True) -> stripe.checkout.Session:
    session = _checkout(seeded, amount)
    remaining = None
    if attach:
        remaining = seeded.client.v1.invoices.attach_payment(
            seeded.invoice, params={"payment_intent": session.payment_intent}).amount_remaining
    if record:
        _record(seeded, session, remaining if remaining is not None else SEED.YEARLY_AMOUNT - amount)
    return session


def _statuses(seeded, final: bool) -> dict[str, str]:
    vars(seeded.ctx).pop("_partial_payments_memo", None)  # forget reads shared by an earlier judgement
    view = GradingView({}, final=final)
    return {name: check(seeded.ctx, view).status for name, check in CRITERIA.items()}


def test_the_seed_is_idempotent_and_leaves_one_open_invoice(seeded):
    _seed(seeded.workspace, seeded.url, seeded.monkeypatch)  # a second run changes nothing
    client = seeded.client
    assert [c.id for c in client.v1.customers.list(params={"limit": 100}).data] == [seeded.customer]
    assert len(client.v1.subscriptions.list(params={"limit": 100}).data) == 1
    invoice = client.v1.invoices.retrieve(seeded.invoice)
    assert (invoice.status, invoice.amount_due, invoice.amount_remaining) == ("open", SEED.YEARLY_AMOUNT,
                                                                             SEED.YEARLY_AMOUNT)
    assert sqlite3.connect(seeded.workspace / "desk.db").execute("SELECT COUNT(*) FROM members").fetchone() == (1,)


def test_nothing_paid_is_pending_during_the_run_and_fails_at_the_end(seeded):
    assert set(_statuses(seeded, final=False).values()) == {PENDING}
    assert set(_statuses(seeded, final=True).values()) == {FAIL}


def test_two_attached_halves_through_checkout_pass_every_criterion(seeded):
    _half(seeded, FIRST)
    during = _statuses(seeded, final=False)
    assert during["remaining after the first half"] == PASS and during["payments came through checkout"] == PASS
    assert during["invoice paid"] == PENDING and during["two halves"] == PENDING
    _half(seeded, SECOND)
    assert _statuses(seeded, final=True) == {name: PASS for name in CRITERIA}


def test_a_second_charge_of_the_full_amount_is_refused_and_recording_it_anyway_fails(seeded):
    _half(seeded, FIRST)
    whole = _checkout(seeded, SEED.YEARLY_AMOUNT)
    with pytest.raises(stripe.InvalidRequestError) as caught:
        seeded.client.v1.invoices.attach_payment(seeded.invoice, params={"payment_intent": whole.payment_intent})
    assert caught.value.http_status == 400
    _record(seeded, whole, SECOND)  # what an app that ignores the 400 writes
    failing = {name for name, status in _statuses(seeded, final=True).items() if status != PASS}
    assert failing == {"invoice paid", "two halves", "halves checked out", "app recorded both halves"}
    outcome = G.app_recorded_halves(seeded.ctx, GradingView({}, final=True))
    assert whole.payment_intent in outcome.summary


def test_halves_checked_out_but_never_attached_leave_the_invoice_open(seeded):
    _half(seeded, FIRST, attach=False)
    _half(seeded, SECOND, attach=False)
    statuses = _statuses(seeded, final=True)
    assert statuses["halves checked out"] == PASS
    assert {name for name, status in statuses.items() if status != PASS} == set(CRITERIA) - {"halves checked out"}


def test_one_payment_for_everything_pays_the_invoice_but_not_in_halves(seeded):
    _half(seeded, SEED.YEARLY_AMOUNT)
    statuses = _statuses(seeded, final=True)
    assert {name for name, status in statuses.items() if status == PASS} == {"invoice paid",
                                                                             "payments came through checkout"}


def test_a_payment_made_outside_checkout_fails_the_checkout_criterion(seeded):
    _half(seeded, FIRST)
    direct = seeded.client.v1.payment_intents.create(params={
        "amount": SECOND, "currency": "usd", "customer": seeded.customer, "payment_method": "pm_card_visa",
        "confirm": True})
    seeded.client.v1.invoices.attach_payment(seeded.invoice, params={"payment_intent": direct.id})
    outcome = G.paid_through_checkout(seeded.ctx, GradingView({}, final=True))
    assert outcome.status == FAIL
    assert f"{SECOND} ({direct.id}) was not paid through a Checkout Session" in outcome.summary
    assert G.invoice_paid(seeded.ctx, GradingView({}, final=True)).status == PASS


# ---------------------------------------------------------------- the whole environment


@pytest.mark.drill
@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.timeout(1200)
def test_validate_oracle_passes_noop_scores_zero_and_each_mutant_fails_for_its_own_reason():
    failing = validate_failing(ENV)  # the oracle fires nothing; attach-400-as-success fires 400-as-success
    assert failing["oracle"] == set()
    assert failing["no-op"] == set(CRITERIA)
    assert failing["mutant attach-400-as-success"] == set(CRITERIA) - {"payments came through checkout"}
    assert failing["mutant full-amount-twice"] == {"invoice paid", "two halves", "halves checked out",
                                                   "app recorded both halves"}
    assert failing["mutant no-attach"] == set(CRITERIA) - {"halves checked out"}
    assert failing["mutant one-payment"] == set(CRITERIA) - {"invoice paid", "payments came through checkout"}


def test_the_final_judgement_never_reuses_a_live_read_made_before_the_last_change(seeded):
    _half(seeded, FIRST)
    live = G.invoice_paid(seeded.ctx, GradingView({}, final=False))
    assert live.status == PENDING  # this read of the open invoice is now shared for CACHE_SECONDS
    _half(seeded, SECOND)
    final = G.invoice_paid(seeded.ctx, GradingView({}, final=True))
    assert final.status == PASS, final.summary
