"""Where the time went, from a hand-made trace."""

from __future__ import annotations

import pytest

from stripebench_tui.core.events import ModelMessage, Operator, StripeRequest, ToolCall, ToolResult
from stripebench_tui.core.profile import profile


def _trace():
    evs = [
        ModelMessage(turn=1, t=2.0, text="hi", ttft=0.5, latency=2.0),
        ToolCall(turn=1, t=2.0, call_id="c1", tool="shell"),
        StripeRequest(turn=1, t=2.5, method="POST", path="/v1/customers", status=200, latency=0.25),
        StripeRequest(turn=1, t=3.0, method="POST", path="/v1/checkout/sessions", status=400, latency=0.5),
        ToolResult(turn=1, t=5.0, call_id="c1", tool="shell", duration=3.0),
        StripeRequest(turn=1, t=5.5, method="GET", path="/v1/events", status=200, latency=0.1),  # the watcher's
        Operator(turn=1, t=6.0, action="status", text="paused"),
        Operator(turn=1, t=16.0, action="status", text="running"),
        ModelMessage(turn=2, t=17.0, text="done", ttft=0.2, latency=1.0),
        Operator(turn=2, t=17.0, action="status", text="waiting_for_approval"),
        Operator(turn=2, t=19.0, action="status", text="running"),
    ]
    for i, ev in enumerate(evs):
        ev.seq = i
    return evs


def test_per_turn_figures():
    p = profile(_trace())
    one, two = p.turns
    assert (one.model, one.ttft, one.tool, one.wait) == (2.0, 0.5, 3.0, 10.0)
    assert one.stripe == pytest.approx(0.75) and one.requests == 2  # the watcher's poll outside the call is not tool time
    assert one.wall == 16.0 and one.other == pytest.approx(16.0 - 2.0 - 3.0 - 10.0)  # from the model call's start
    assert (two.model, two.ttft, two.wait) == (1.0, 0.2, 2.0)


def test_episode_summary_and_series():
    p = profile(_trace())
    s = p.summary()
    assert (s["model"], s["tool"], s["wait"], s["wall"]) == (3.0, 3.0, 12.0, 19.0)
    assert p.series("wait") == [10.0, 2.0]
    assert p.slowest("model").turn == 1


def test_the_atif_export_carries_the_figures_and_imports_model_time_back(tmp_path):
    from stripebench_tui.core.events import Header
    from stripebench_tui.core.trace import Trace
    from stripebench_tui.formats.atif import atif_from_trace, events_from_atif

    events = _trace()
    doc = atif_from_trace(Trace.from_events(tmp_path / "t.jsonl", Header(env="x"), events))
    time = doc["final_metrics"]["extra"]["stripebench_time"]
    assert (time["model"], time["tool"], time["wait"]) == (3.0, 3.0, 12.0) and time["stripe"] == pytest.approx(0.75)
    assert [t["turn"] for t in doc["final_metrics"]["extra"]["stripebench_time_by_turn"]] == [1, 2]
    _, back = events_from_atif(doc)
    assert profile(back).summary() == profile(events).summary()
