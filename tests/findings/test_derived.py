"""with_derived_findings: a trace without findings gets the detectors' ones where a live run would publish them."""

from __future__ import annotations

from pathlib import Path

from stripebench_tui.core.events import EpisodeEnd, Finding
from stripebench_tui.findings import detect, with_derived_findings
from stripebench_tui.formats.open import open_episode
from tests.tui.episode import write_trace
from tests.tui.findings_episode import findings_events

# recorded before the detectors existed (replays/checkout-migration-400 as first committed): no findings in it
REPLAY = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "traces" / "checkout-migration-400-before-detectors"


def test_derived_findings_follow_the_event_that_fired_them_and_precede_the_end() -> None:
    events = list(open_episode(REPLAY).iter_events())
    out = with_derived_findings(events)
    derived = [e for e in out if isinstance(e, Finding)]
    assert [(f.detector, f.turn) for f in derived] == [(f.detector, f.turn) for f in detect(events)]
    assert ("400-as-success", 11) in [(f.detector, f.turn) for f in derived]
    assert [e for e in out if not isinstance(e, Finding)] == events  # nothing else moved or lost
    assert isinstance(out[-1], EpisodeEnd)
    for f in derived:  # stamped with the time of the event that fired it (just before), or the end's
        assert f.t in (out[out.index(f) - 1].t, out[-1].t)
    assert derived[0].detector == "400-as-success" and derived[0].t == out[out.index(derived[0]) - 1].t


def test_a_trace_with_findings_of_its_own_is_given_back_as_it_is(tmp_path: Path) -> None:
    events = list(write_trace(tmp_path / "f.jsonl", findings_events()).iter_events())
    assert any(isinstance(e, Finding) for e in events)
    assert with_derived_findings(events) == events
