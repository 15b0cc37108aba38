"""The committed sample replays are exactly what scripts/make_sample_replays.py writes, and tell their stories."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from stripebench_tui.core.events import StripeObject
from stripebench_tui.core.trace import open_trace

ROOT = Path(__file__).resolve().parent.parent
NAMES = ("checkout-migration-pass.jsonl", "checkout-migration-400.jsonl")


def test_committed_samples_match_the_script(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(ROOT / "scripts" / "make_sample_replays.py"), str(tmp_path)], check=True, capture_output=True)
    for name in NAMES:
        assert (tmp_path / name).read_bytes() == (ROOT / "replays" / name).read_bytes(), f"rerun scripts/make_sample_replays.py ({name})"
        made = sorted(p.relative_to(tmp_path) for p in (tmp_path / (name + ".d")).rglob("*") if p.is_file())
        committed = sorted(p.relative_to(ROOT / "replays") for p in (ROOT / "replays" / (name + ".d")).rglob("*") if p.is_file())
        assert made == committed


def test_samples_are_marked_hand_made_and_tell_their_stories() -> None:
    passing = open_trace(ROOT / "replays" / NAMES[0])
    failing = open_trace(ROOT / "replays" / NAMES[1])
    for trace in (passing, failing):
        assert trace.header.extra["hand_made"] is True and trace.header.env == "checkout-migration"
    final = passing.state_at()
    assert final.ended is not None and final.ended.passed and final.score() == 1.0
    session = next(o for o in final.objects.values() if o.object_type == "checkout.session")
    assert session.data["ui_mode"] == "embedded" and session.data["payment_status"] == "paid"
    assert session.data["total_details"]["amount_discount"] > 0
    # verdicts turn green over time, not all at once
    green_turns = {c.criterion: c.changed_turn for c in final.verdicts.values()}
    assert len(set(green_turns.values())) >= 3
    assert passing.state_at(green_turns["ui_mode_embedded"]).verdicts["paid"].status == "pending"
    # the 400 episode never creates a session and ends red
    bad = failing.state_at()
    assert bad.ended is not None and bad.ended.passed is False and (bad.score() or 0) < 1
    assert not any(isinstance(e, StripeObject) and e.object_type == "checkout.session" for e in failing.iter_events())
    assert bad.verdicts["paid"].status == "fail"
    # a huge output lives in a sidecar
    results = [c.result for t in final.turns for c in t.calls if c.result is not None and c.result.sidecar]
    assert results and len(passing.full_output(results[0])) > 64 * 1024
