"""The fidelity gauge on a served emulator: no field stripe-python does not declare, every declared field we leave
out explained in ``fidelity_gaps.GAPS``, and no stale entry there."""

from __future__ import annotations

import subprocess
import sys

import stripe

from stripebench_emulator import fidelity
from stripebench_emulator.fidelity_gaps import GAPS


def test_every_kind_renders_only_declared_fields_and_every_gap_is_explained(emulator) -> None:
    results, unknown = fidelity.gauge(emulator.url)
    assert unknown == []
    kinds = {c.kind for c in results}
    assert {"customer", "checkout.session", "payment_intent", "invoice", "subscription", "tax_id"} <= kinds
    assert {c.kind: sorted(c.undeclared) for c in results if c.undeclared} == {}
    assert {c.kind: sorted(c.unexplained) for c in results if c.unexplained} == {}
    assert {c.kind: sorted(c.stale) for c in results if c.stale} == {}
    assert {kind for kind, _ in GAPS} <= kinds  # the table names no kind the gauge does not make


def test_the_comparison_sees_undeclared_unexplained_and_stale_fields() -> None:
    class Made(stripe.StripeObject):
        OBJECT_NAME = "made"
        id: str
        colour: str
        size: str

    coverage = fidelity.compare("made", {"id", "object", "weight"}, {"made": Made})
    assert coverage.undeclared == {"object", "weight"} and coverage.unexplained == {"colour", "size"}
    assert fidelity.compare("customer", {"id", "deleted"}, {"customer": stripe.Customer}).stale == {"deleted"}


def test_the_command_prints_coverage_per_kind() -> None:
    run = subprocess.run([sys.executable, "-m", "stripebench_emulator", "fidelity", "--gaps"], capture_output=True,
                         text=True, timeout=180)
    assert run.returncode == 0, run.stdout + run.stderr
    rows = {line.split()[0]: line for line in run.stdout.splitlines()[2:] if not line.startswith("  ")}
    assert "customer" in rows and "%" in rows["customer"] and "UNDECLARED" not in run.stdout
    assert "  customer.deleted: only on deleted objects" in run.stdout
