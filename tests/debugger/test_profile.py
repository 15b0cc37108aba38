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


# ---- the harness's own time (harness_time events, a tool's startup) ----


def _trace_with_the_harness():
    """A live episode's shape: setup until t=3 (the last second waiting for the tool servers), a turn whose browser
    call spent 1.5 s of its 2 s starting Chromium, its turn end (grading, publish), a second turn, the final grading."""
    from stripebench_tui.core.events import EpisodeEnd, HarnessTime

    evs = [
        ModelMessage(turn=0, t=0.5, role="user", text="the task"),  # the first event comes after t=0
        HarnessTime(turn=0, t=3.0, stretch="setup", parts={"setup": 2.0, "tool_start": 1.0}),
        ModelMessage(turn=1, t=4.0, text="open the shop", latency=1.0),
        ToolCall(turn=1, t=4.0, call_id="b1", tool="browser_navigate"),
        ToolResult(turn=1, t=6.0, call_id="b1", tool="browser_navigate", duration=2.0, startup=1.5),
        HarnessTime(turn=1, t=6.5, stretch="turn_end", parts={"grading": 0.375, "publish": 0.125}),
        ModelMessage(turn=2, t=7.5, text="done", latency=0.75),  # 0.25 s between the turns nobody recorded
        HarnessTime(turn=2, t=7.75, stretch="turn_end", parts={"grading": 0.125, "publish": 0.125}),
        HarnessTime(turn=2, t=10.0, stretch="final", parts={"grading": 2.0, "publish": 0.25}),
        EpisodeEnd(turn=2, t=10.0, reason="agent_done"),
    ]
    for i, ev in enumerate(evs):
        ev.seq = i
    return evs


def test_the_harness_parts_are_named_per_turn_and_the_setup_starts_the_wall_at_zero():
    p = profile(_trace_with_the_harness())
    setup, one, two = p.turns
    assert (setup.start, setup.end) == (0.0, 3.0) and setup.parts == {"setup": 2.0, "tool_start": 1.0}
    assert setup.other == 0.0
    assert one.tool == 0.5 and one.parts == {"tool_start": 1.5, "grading": 0.375, "publish": 0.125}  # Chromium's start
    assert one.wall == 3.5 and one.other == 0.0  # from the model call's start to the end of its turn-end stretch
    assert two.parts == {"grading": 2.125, "publish": 0.375} and two.other == 0.0
    assert p.parts() == ["setup", "tool_start", "grading", "publish"]
    assert p.series("grading") == [0.0, 0.375, 2.125] and p.slowest("tool_start").turn == 1


def test_with_the_harness_named_only_unrecorded_time_is_other_and_the_totals_add_up():
    s = profile(_trace_with_the_harness()).summary()
    assert s == {"model": 1.75, "ttft": 0.0, "tool": 0.5, "stripe": 0.0, "wait": 0.0, "setup": 2.0, "tool_start": 2.5,
                 "grading": 2.5, "publish": 0.5, "other": 0.25, "wall": 10.0}
    assert sum(v for k, v in s.items() if k not in ("ttft", "stripe", "wall")) == pytest.approx(s["wall"])


def test_a_trace_from_before_the_harness_timed_itself_profiles_as_it_did():
    from stripebench_tui.core.events import HarnessTime

    events = _trace_with_a_gap()
    before = profile(events).summary()
    assert list(before) == ["model", "ttft", "tool", "stripe", "wait", "other", "wall"]  # no part, as before
    # the same episode with its gap named: only "other" and the named part change
    named = [*events, HarnessTime(turn=1, t=events[-1].t, stretch="turn_end", parts={"grading": 3.0})]
    after = profile(named).summary()
    assert after["grading"] == 3.0 and after["other"] == pytest.approx(before["other"] - 3.0)
    assert {k: v for k, v in after.items() if k not in ("grading", "other")} == \
        {k: v for k, v in before.items() if k != "other"}


def test_the_summary_shows_a_harness_column_and_a_table_of_its_parts():
    import io

    from stripebench_tui.core.state import reduce
    from stripebench_tui.formats.text import write_summary

    events = _trace_with_the_harness()
    out = io.StringIO()
    write_summary(reduce(events), out, profile=profile(events))
    text = out.getvalue()
    header = next(line for line in text[text.index("Where the time went"):].splitlines() if "turn" in line)
    assert [c.strip() for c in header.strip("┃").split("┃")] == \
        ["turn", "wall", "model", "ttft", "tool", "stripe", "wait", "harness", "other"]
    #                   wall      model    ttft     tool     stripe   wait     harness  other
    assert _rows(text)["all"] == ["10.00s", "1.75s", "0.00s", "0.50s", "0.00s", "0.00s", "7.50s", "0.25s"]
    parts = text[text.index("The harness's own time"):]
    rows = {r[0]: r[1:4] for r in ([c.strip() for c in line.strip("│").split("│")] for line in parts.splitlines()
                                   if line.startswith("│")) if r[0]}
    assert rows == {"setup": ["2.00s", "20%", "0 (2.00s)"], "tool start": ["2.50s", "25%", "1 (1.50s)"],
                    "grading": ["2.50s", "25%", "2 (2.12s)"], "publish": ["0.50s", "5%", "2 (0.38s)"]}

    old = io.StringIO()
    write_summary(reduce(_trace_with_a_gap()), old, profile=profile(_trace_with_a_gap()))
    assert "harness" not in old.getvalue()  # an old trace's table is the one it always had


def test_a_stopwatch_laps_parts_one_after_another_on_its_clock():
    from stripebench_tui.core.profile import Stopwatch

    now = [10.0]
    watch = Stopwatch(lambda: now[0], since=8.0)
    now[0] = 11.0
    watch.lap("setup")  # since 8.0
    now[0] = 11.5
    watch.lap(None)  # not the harness's: left uncounted
    now[0] = 12.25
    watch.lap("grading")
    now[0] = 12.5
    watch.lap("setup")
    first = watch.record("setup")
    assert (first.type, first.stretch, first.parts) == ("harness_time", "setup", {"setup": 3.25, "grading": 0.75})
    now[0] = 13.0
    watch.lap("publish")
    assert watch.record("turn_end").parts == {"publish": 0.5}  # the first record's parts went with it


async def test_the_time_screen_shows_each_part_of_the_harness_and_what_is_left(tmp_path):
    from stripebench_tui.tui.apps.replay_app import create_app
    from stripebench_tui.tui.screens.time_screen import TimeScreen
    from stripebench_tui.tui.sources.episode_source import TraceSource
    from tests.tui.conftest import SIZE, settle
    from tests.tui.episode import write_trace

    app = create_app(TraceSource(write_trace(tmp_path / "t.jsonl", _trace_with_the_harness())), clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("w")  # where the time went
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, TimeScreen)
        assert list(screen.query_one("#spark-grading").data) == [0.0, 0.375, 2.125]
        assert list(screen.query_one("#spark-tool_start").data) == [1.0, 1.5, 0.0]
        summary = str(screen.query_one("#time-summary").render())
        assert "harness: setup 2.0s (20%)" in summary and "harness: tool start 2.5s (25%)" in summary
        assert summary.endswith("other 0.2s (2%)")
        assert "turn 1: 3.5s (model 1.0, tools 0.5, Stripe 0.0, wait 0.0, tool start 1.5, grading 0.4, publish 0.1)" \
            in str(screen.query_one("#time-slowest").render())
