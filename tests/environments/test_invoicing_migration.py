"""invoicing-migration: the grader's reads of Stripe, a migration that fails, and validate (each mutant loses its
own criterion)."""

from __future__ import annotations

from pathlib import Path

import pytest

from stripebench_emulator.testing import emulator, emulator_server  # noqa: F401 - pytest fixtures, requested by name below
from stripebench_tui.core.events import FAIL
from stripebench_tui.envs.catalog import find_environment
from stripebench_tui.grading import GradingContext, load_grader

from .helpers import findings_in, load_grader_module, play_for_findings, validate_failing

ENV = find_environment("invoicing-migration")
GRADER = load_grader(ENV)
G = load_grader_module(ENV, "invoicing_migration.py", "im_grader_under_test")


def _ctx(tmp_path: Path, emulator_url: str) -> GradingContext:
    # port 9 (discard) refuses connections: the app is down, so the purchase checks fail rather than error
    return GradingContext(env=ENV, episode_dir=tmp_path, workspace=tmp_path, stripe_api_base=emulator_url,
                          stripe_api_key="sk_test_migration", app_urls={"APP_URL": "http://127.0.0.1:9"})


def test_every_rule_is_a_final_criterion_and_the_legacy_rows_come_from_the_pristine_export():
    assert [c.name for c in GRADER.criteria] == G.NAMES and all(c.final_only for c in GRADER.criteria)
    rows = G.legacy_bookings(ENV.workspace)
    assert {r["status"] for r in rows} == {"paid", "paid_offline", "open", "void"}
    two = next(r for r in rows if r["booking_id"] == "LB-1002")
    assert (two["quantity"], two["cents"]) == (2, 14000)  # "140.00" dollars
    assert G.cents("0.10") == 10 and G.cents("45") == 4500


def test_a_migration_that_fails_fails_every_criterion(tmp_path, emulator):  # noqa: F811 - pytest fixtures imported above, requested by name
    (tmp_path / "migrate.py").write_text("import sys\nsys.exit('not implemented')\n")
    results = G._results(_ctx(tmp_path, emulator.url))
    assert set(results) == set(G.NAMES)
    assert {o.status for o in results.values()} == {FAIL}
    duplicates = results["re-run makes no duplicates"].summary
    assert "run 1 of migrate.py exited with 1" in duplicates and "not implemented" in duplicates
    assert "lookup_key" in results["catalogue"].summary
    assert "did not answer" in results["purchase"].summary
    assert "sent 0 invoice create(s) and exited 1" in results["resumes after an interruption"].summary


def test_the_grader_tells_a_card_payment_from_one_out_of_band(tmp_path, emulator):  # noqa: F811 - pytest fixtures imported above, requested by name
    import stripe

    api = stripe.StripeClient("sk_test_migration", base_addresses={"api": emulator.url}).v1
    product = api.products.create(params={"name": "Private session", "metadata": {"sku": "private-session"}})
    price = api.prices.create(params={"product": product.id, "unit_amount": 7000, "currency": "usd",
                                      "lookup_key": "private-session"})
    customer = api.customers.create(params={"email": "lee.park@example.com"})
    card = api.payment_methods.attach("pm_card_visa", params={"customer": customer.id})

    def invoice(booking: str) -> str:
        draft = api.invoices.create(params={"customer": customer.id, "metadata": {"legacy_booking_id": booking}})
        api.invoice_items.create(params={"customer": customer.id, "invoice": draft.id, "pricing": {"price": price.id}})
        return api.invoices.finalize_invoice(draft.id).id

    by_card = api.invoices.pay(invoice("LB-A"), params={"payment_method": card.id})
    at_desk = api.invoices.pay(invoice("LB-B"), params={"paid_out_of_band": True})
    run = G.Run(_ctx(tmp_path, emulator.url))
    assert not run.out_of_band(by_card) and run.out_of_band(at_desk)
    assert [pi.amount_received for pi in run.paid_by_card(by_card)] == [7000] and run.paid_by_card(at_desk) == []
    found = run.invoices_of({"email": "lee.park@example.com", "booking_id": "LB-B"})
    assert [i.id for i in found] == [at_desk.id]
    assert G._line_problem(run, found[0], "private-session", 1, 7000, "usd") is None
    assert "× 2" in G._line_problem(run, found[0], "private-session", 2, 14000, "usd")


@pytest.mark.drill
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_validate_oracle_passes_noop_scores_zero_and_each_mutant_fails_its_own_rule():
    failing = validate_failing(ENV)
    assert failing["oracle"] == set()
    assert failing["no-op"] == set(G.NAMES)
    assert failing["mutant void-as-delete"] == {"voided bookings"}
    assert failing["mutant offline-charged-by-card"] == {"paid out of band"}
    # it never looks an invoice up: the plain re-runs and the resumed one all bill again
    assert failing["mutant rerun-duplicates"] == {"re-run makes no duplicates", "resumes after an interruption"}
    # a clean re-run, but the booking whose answer was lost is not in its table: billed twice
    assert failing["mutant local-db-resume"] == {"resumes after an interruption"}
    assert failing["mutant item-400-as-success"] == {"purchase", "decline"}


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_wrong_final_state_fires_when_the_migration_deletes_a_cancelled_bookings_draft_and_never_on_the_oracle(tmp_path):
    """The manifest says legacy invoices end paid, void or open; the oracle voids (and its purchases' drafts are
    not legacy invoices), the mutant deletes."""
    runs = play_for_findings(ENV, ["void-as-delete"], tmp_path)
    oracle, events = runs["oracle"]
    assert oracle.findings == [] and events[0]["expects"]["final_states"][0]["metadata"] == "legacy_booking_id"
    assert any(e.get("type") == "stripe_request" and e["path"].endswith("/void") for e in events)
    outcome, trace = runs["mutant void-as-delete"]
    found = findings_in(trace, "wrong-final-state")
    assert found and all(" deleted; the task asks for open, paid, void" in f["message"] for f in found)
    assert found[0]["message"].startswith("DELETE /v1/invoices/in_")
