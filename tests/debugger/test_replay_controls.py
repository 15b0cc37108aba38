"""Replay controls (Pilot): speed presets, a breakpoint stops playback, jumps to findings and hits, the time chart."""

from __future__ import annotations

import math

from stripebench_tui.core.events import Finding, ModelMessage, Operator
from stripebench_tui.core.playback import MAX, Playback, next_mark
from stripebench_tui.tui.apps.replay_app import create_app
from stripebench_tui.tui.screens.breakpoints import BreakpointScreen
from stripebench_tui.tui.screens.time_screen import TimeScreen
from stripebench_tui.tui.sources.episode_source import TraceSource
from stripebench_tui.tui.widgets.status_bar import StatusBar
from tests.tui.conftest import SIZE, settle
from tests.tui.episode import checkout_events, write_trace


class Clock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


def test_presets_with_an_injected_clock():
    clock = Clock()
    p = Playback(clock=clock)
    p.play(10.0)
    p.set_speed(8.0)
    assert p.delay_until(18.0) == 1.0
    clock.now += 0.5
    assert p.episode_time() == 14.0
    p.set_speed(MAX)
    assert p.delay_until(1e6) == 0.0  # max: every turn at once
    clock.now += 100
    assert p.episode_time() == 14.0  # the playhead moves only by seek
    assert math.isinf(p.faster()) and p.slower() == 128.0


def test_next_mark_both_ways():
    assert next_mark([6, 2, 4], 2) == 4 and next_mark([2, 4, 6], 6) is None
    assert next_mark([2, 4, 6], 5, forward=False) == 4 and next_mark([2, 4], 2, forward=False) is None


def _marked_events():
    evs = checkout_events()
    at = {2: Finding(turn=2, t=5.5, detector="400-as-success", message="a 400 read as success"),
          4: Operator(turn=4, t=14.8, action="break_hit", text="breakpoint #1 (request 4xx)"),
          5: Finding(turn=5, t=20.1, detector="lost-focus", message="typed into the wrong field")}
    out = []
    for ev in evs:
        out.append(ev)
        extra = at.pop(ev.turn, None) if isinstance(ev, ModelMessage) else None
        if extra is not None:
            out.append(extra)
    return out


def turn_of(app) -> int:
    s = app.episode
    return s.turns[s.position]


async def test_speed_keys_and_playback_at_max_stopping_at_a_breakpoint_hit(tmp_path):
    trace = write_trace(tmp_path / "t.jsonl")
    app = create_app(TraceSource(trace), clock=lambda: 0.0, breakpoints=["tool write_file"])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.episode
        speeds = []
        for key in ("8", "2", "1", "m"):
            await pilot.press(key)
            speeds.append(screen.playback.speed)
        assert speeds == [8.0, 2.0, 1.0, MAX]
        await pilot.press("space")
        await settle(pilot)
        await pilot.pause(0.05)
        await settle(pilot)
        assert turn_of(app) == 3 and not screen.playing  # turn 3 wrote the file
        assert "stopped: breakpoint #1 (tool write_file)" in screen.query_one(StatusBar).line_text
        assert "×max" in screen.query_one(StatusBar).line_text
        await pilot.press("space")  # on from there, to the end (no other hit)
        await settle(pilot)
        await pilot.pause(0.05)
        await settle(pilot)
        assert turn_of(app) == 6


async def test_jumps_to_findings_hits_and_verdicts(tmp_path):
    app = create_app(TraceSource(write_trace(tmp_path / "t.jsonl", _marked_events())), clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        seen = []
        for key in ("greater_than_sign", "greater_than_sign", "less_than_sign", "right_curly_bracket", "G",
                    "V", "left_curly_bracket"):
            await pilot.press(key)
            await settle(pilot)
            seen.append(turn_of(app))
        # findings at 2 and 5, a recorded hit at 4, verdicts changed at 0, 4 and 6
        assert seen == [2, 5, 2, 4, 6, 4, 4]
        await pilot.press("w")  # where the time went: a bar per turn
        await settle(pilot)
        assert isinstance(app.screen, TimeScreen)
        assert list(app.screen.query_one("#spark-tool").data) == [0.0, 0.8, 0.8, 0.8, 2.5, 0.8, 0.8]
        assert "slowest: turn 4" in str(app.screen.query_one("#time-slowest").render())


async def test_breakpoint_dialog_adds_checks_and_removes(tmp_path):
    app = create_app(TraceSource(write_trace(tmp_path / "t.jsonl")), clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("b")
        dialog = app.screen
        assert isinstance(dialog, BreakpointScreen)
        await pilot.press(*"tool", "enter")  # no tool named: refused, with the reason
        assert "say which tool" in str(dialog.query_one("#bp-error").render())
        dialog.query_one("#bp-input").value = "finding nope"  # no such detector: refused, naming the known ones
        await pilot.press("enter")
        assert "no detector matches 'nope'" in str(dialog.query_one("#bp-error").render())
        assert app.episode.debugger.exprs == [] and app.screen is dialog
        dialog.query_one("#bp-input").value = "verdict pass payment_*"
        await pilot.press("enter")
        await settle(pilot)
        assert app.episode.debugger.exprs == ["verdict pass payment_*"]
        assert [h.turn for h in app.episode.debugger.marks.hits] == [6]
        await pilot.press("tab", "down", "d")
        assert app.episode.debugger.exprs == []
        await pilot.press("escape")
        assert app.screen is app.episode


