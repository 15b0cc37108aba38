"""The driver times its own work: one ``harness_time`` event per turn end and one at the end, by the part each hook
is marked with, on the bus's clock (a fake one here, moved by the tools and hooks), so the profile names it."""

from __future__ import annotations

from stripebench_tui.core.driver import FinalScore
from stripebench_tui.core.events import EpisodeEnd, HarnessTime, ToolResult
from stripebench_tui.core.profile import GRADING, PUBLISH, harness_part, profile
from stripebench_tui.core.tool_types import ToolOutcome

from .scripted import FakeClock, ScriptedAgent, ScriptedTools, call, make_driver, turn


def _browser(clock: FakeClock) -> ScriptedTools:
    """A browser tool whose first call spends 0.75 of its 1 s starting Chromium."""
    started = []

    def navigate(arguments):
        clock.advance(1.0)
        startup = 0.0 if started else 0.75
        started.append(True)
        return ToolOutcome(text="opened", startup=startup)  # no duration: the driver times the call

    return ScriptedTools({"browser_navigate": navigate})


async def test_turn_ends_and_the_end_record_the_harness_time_by_the_part_each_hook_is_marked_with():
    clock = FakeClock()

    @harness_part(PUBLISH)
    async def catch_up(driver):
        clock.advance(0.25)

    @harness_part(GRADING)
    async def grade(driver):
        clock.advance(0.5)

    async def unmarked(driver):  # nobody said what it is: its time stays in "other"
        clock.advance(2.0)

    @harness_part(GRADING)
    async def final_grade(driver):
        clock.advance(3.0)
        return FinalScore(score=1.0, passed=True)

    agent = ScriptedAgent([turn(call("c1", "browser_navigate", url="/")), turn(call("c2", "browser_navigate", url="/")),
                           turn(done=True)])
    driver, seen = make_driver(agent, _browser(clock), clock=clock, turn_end_hooks=[catch_up, grade, unmarked],
                               final_hooks=[final_grade])
    end = await driver.run()

    stretches = [e for e in seen.events if isinstance(e, HarnessTime)]
    assert [(s.turn, s.stretch, s.parts) for s in stretches] == [
        (1, "turn_end", {"publish": 0.25, "grading": 0.5}),  # draining the bus takes no time on this clock
        (2, "turn_end", {"publish": 0.25, "grading": 0.5}),
        (3, "turn_end", {"publish": 0.25, "grading": 0.5}),
        (3, "final", {"grading": 3.0, "publish": 0.0}),
    ]
    assert seen.events[-3] is stretches[-1] and isinstance(seen.events[-1], EpisodeEnd)  # the end comes after it
    results = [e for e in seen.events if isinstance(e, ToolResult)]
    assert [(r.duration, r.startup) for r in results] == [(1.0, 0.75), (1.0, 0.0)]

    s = profile(seen.events).summary()
    assert (s["tool"], s["tool_start"], s["grading"], s["publish"]) == (1.25, 0.75, 4.5, 0.75)
    assert s["other"] == 3 * 2.0 and s["wall"] == end.t == 2 * 1.0 + 3 * 2.75 + 3.0  # the unmarked hook's, only
