"""The request log and findings in the text log, the summary and the ATIF export (and back)."""

from __future__ import annotations

import io
import json
from pathlib import Path

from stripebench_tui.core.events import Finding, StripeRequest
from stripebench_tui.core.state import reduce
from stripebench_tui.formats.atif import atif_from_trace, events_from_atif
from stripebench_tui.formats.text import format_event, write_headless, write_summary
from tests.tui.episode import write_trace
from tests.tui.findings_episode import findings_events


def test_requests_and_findings_are_one_line_each_in_the_text_log(tmp_path: Path) -> None:
    trace = write_trace(tmp_path / "t.jsonl", findings_events())
    lines = [format_event(trace, e) for e in trace.iter_events() if isinstance(e, (StripeRequest, Finding))]
    assert lines[0] == ("⇄ POST /v1/checkout/sessions 400 invalid_request_error parameter_missing (agent 4ms) "
                        "req_001")
    assert lines[1] == "⚑ finding lost-focus: browser_fill 'Card number' hit an element that cannot take input  call:call_2"
    assert "(app 12ms idem) req_003" in lines[3]
    assert lines[-1].endswith("req_001 #30")
    assert None in lines and not any(line and "req_004" in line for line in lines)  # the grader's read is left out


def test_the_headless_log_prints_recorded_findings_as_recorded(tmp_path: Path) -> None:
    trace = write_trace(tmp_path / "t.jsonl", findings_events())
    out = io.StringIO()
    write_headless(trace, out)
    assert "⚑ finding lost-focus:" in out.getvalue() and "⚑ finding 400-as-success:" in out.getvalue()
    assert "⚐" not in out.getvalue() and "derived" not in out.getvalue()  # the detectors are not run again


def test_the_summary_counts_requests_and_lists_findings(tmp_path: Path) -> None:
    state = reduce(findings_events())
    out = io.StringIO()
    write_summary(state, out)
    text = out.getvalue()
    assert "Stripe requests: 4 (3 2xx, 1 4xx; 2 app, 1 agent, 1 grader)" in text
    assert "Findings" in text and "400-as-success" in text and "lost-focus" in text
    assert "derived" not in text  # recorded ones
    out = io.StringIO()
    write_summary(state, out, findings=[])  # a caller that checked again and found nothing
    assert "Findings: none" in out.getvalue()


def test_atif_export_carries_findings_on_their_steps_and_round_trips(tmp_path: Path) -> None:
    trace = write_trace(tmp_path / "t.jsonl", findings_events())
    doc = json.loads(json.dumps(atif_from_trace(trace)))
    ours = doc["extra"]["stripebench"]
    assert [(f["detector"], f["turn"]) for f in ours["findings"]] == [("lost-focus", 2), ("400-as-success", 6)]
    assert "findings_derived" not in ours and not any("derived" in f for f in ours["findings"])  # recorded ones
    marked = {s["extra"]["stripebench"]["turn"]: s["extra"]["stripebench"].get("findings") for s in doc["steps"]}
    assert marked[2] == ["lost-focus"] and marked[6] == ["400-as-success"] and marked[4] is None
    _, events = events_from_atif(doc)
    back = reduce(events)
    assert [r.request_id for r in back.requests] == ["req_001", "req_002", "req_003", "req_004"]
    assert [f.detector for f in back.findings] == ["lost-focus", "400-as-success"]
    assert back.turn(4).request_ids == ["req_002", "req_003"]
