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


def _trace_with_a_gap():
    """``_trace`` with turn 2 three seconds later: time between the turns (grading, say) that no turn holds."""
    evs = _trace()
    for ev in evs:
        if ev.turn == 2:
            ev.t += 3.0
    return evs


def test_the_episode_totals_add_up_to_its_wall():
    s = profile(_trace_with_a_gap()).summary()
    assert (s["model"], s["tool"], s["wait"], s["wall"]) == (3.0, 3.0, 12.0, 22.0)
    # turn 1 leaves 1 s, turn 2 none, and the 3 s between them are the episode's too
    assert s["other"] == pytest.approx(4.0)
    assert s["model"] + s["tool"] + s["wait"] + s["other"] == pytest.approx(s["wall"])


def _rows(text):
    """The table rows of the summary's time table, by their first cell."""
    table = text[text.index("Where the time went"):]
    rows = [[c.strip() for c in line.strip("│").split("│")] for line in table.splitlines() if line.startswith("│")]
    return {row[0]: row[1:] for row in rows}


def test_the_summary_prints_the_episode_totals_and_each_turns_model_time():
    import io

    from stripebench_tui.core.state import reduce
    from stripebench_tui.formats.text import write_summary

    events = _trace_with_a_gap()
    out = io.StringIO()
    write_summary(reduce(events), out, profile=profile(events))
    rows = _rows(out.getvalue())
    #                   wall      model    ttft     tool     stripe   wait      other
    assert rows["all"] == ["22.00s", "3.00s", "0.70s", "3.00s", "0.75s", "12.00s", "4.00s"]
    assert rows["1"][:3] == ["16.00s", "2.00s", "0.50s"] and rows["2"][:3] == ["3.00s", "1.00s", "0.20s"]
    assert "all: the episode's totals; then its 5 slowest turns" in out.getvalue()


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
