"""The committed replays are recorded runs (`stripebench run ENV --headless`) and tell their stories."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from stripebench_tui.core.events import ModelMessage, StripeObject, ToolResult
from stripebench_tui.core.trace import open_trace

REPLAYS = Path(__file__).resolve().parent.parent / "replays"
ORACLES = sorted(p.name for p in REPLAYS.glob("*-oracle"))
KEY = re.compile(rb"(sk|rk|pk)_(test|live)_[A-Za-z0-9]{8,}|whsec_[A-Za-z0-9]{8,}")


def test_there_is_a_recorded_oracle_run_of_every_environment() -> None:
    envs = {p.parent.name for p in (REPLAYS.parent / "environments").glob("*/environment.toml")}
    assert {name.removesuffix("-oracle") for name in ORACLES} == envs


@pytest.mark.parametrize("name", ORACLES)
def test_oracle_replays_are_recorded_runs_that_pass(name: str) -> None:
    trace = open_trace(REPLAYS / name)
    assert trace.header.agent == "oracle" and "hand_made" not in trace.header.extra
    assert trace.header.env == name.removesuffix("-oracle") and trace.header.backend == "emulator"
    final = trace.state_at()
    assert final.ended is not None and final.ended.reason == "agent_done"
    assert final.ended.passed is True and final.score() == 1.0
    assert final.objects, "a recorded run sees Stripe objects"
    # every screenshot a tool result names is committed beside the trace
    for ev in trace.iter_events():
        if isinstance(ev, ToolResult):
            for image in ev.images:
                assert (trace.path.parent / image).is_file(), image


def test_the_checkout_migration_oracle_pays_with_embedded_checkout_and_a_promotion_code() -> None:
    trace = open_trace(REPLAYS / "checkout-migration-oracle")
    final = trace.state_at()
    session = next(o for o in final.objects.values() if o.object_type == "checkout.session")
    assert session.data["ui_mode"] == "embedded_page" and session.data["payment_status"] == "paid"
    assert session.data["total_details"]["amount_discount"] > 0
    # verdicts turn green over time: some pass live, during the turns, before the end-of-episode checks
    changed = {c.criterion: c.changed_turn for c in final.verdicts.values()}
    assert len(set(changed.values())) >= 2
    first_green = min(changed.values())
    assert trace.state_at(first_green - 1).verdicts["paid"].status == "pending"
    assert any(t.index > first_green for t in final.turns)


def test_the_failing_replay_saw_an_http_400_and_called_it_success() -> None:
    trace = open_trace(REPLAYS / "checkout-migration-400")
    events = list(trace.iter_events())
    saw_400 = next(e for e in events if isinstance(e, ToolResult) and "HTTP 400" in e.output)
    claim = next(e for e in events if isinstance(e, ModelMessage) and e.seq > saw_400.seq)
    assert "complete" in claim.text
    assert not any(isinstance(e, StripeObject) and e.object_type == "checkout.session" for e in events)
    final = trace.state_at()
    assert final.ended is not None and final.ended.passed is False and (final.score() or 0) < 0.5
    assert final.verdicts["paid"].status == "fail"


def test_no_secret_in_any_committed_replay_file() -> None:
    for path in REPLAYS.rglob("*"):
        if path.is_file():
            assert not KEY.search(path.read_bytes()), path


def test_the_partial_payments_oracle_pays_one_invoice_with_two_checkout_halves() -> None:
    trace = open_trace(REPLAYS / "partial-payments-oracle")
    final = trace.state_at()
    [invoice] = [o for o in final.objects.values() if o.object_type == "invoice"]
    paid = (invoice.data["status"], invoice.data["amount_paid"], invoice.data["amount_remaining"])
    assert paid == ("paid", 124999, 0)
    sessions = sorted(o.data["amount_total"] for o in final.objects.values() if o.object_type == "checkout.session"
                      and o.data["status"] == "complete")
    payments = sorted(o.data["amount_paid"] for o in final.objects.values() if o.object_type == "invoice_payment")
    assert sessions == payments == [62499, 62500]
    # the invoice is paid only once the second half is attached: pending through the first half, then pass
    changed = final.verdicts["invoice paid"].changed_turn
    assert trace.state_at(changed - 1).verdicts["invoice paid"].status == "pending"
    assert trace.state_at(changed - 1).verdicts["remaining after the first half"].status == "pass"
