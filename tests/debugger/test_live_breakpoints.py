"""A breakpoint pauses a live episode at the right turn (Pilot on the tiny-shop fixture); the dialog changes them."""

from __future__ import annotations

from pathlib import Path

import pytest

from stripebench_tui.core.operator import PAUSED
from stripebench_tui.tui.apps.live_app import create_live_app
from stripebench_tui.tui.screens.breakpoints import BreakpointScreen
from tests.fixture_envs import fixture_envs  # noqa: F401  (registers the autouse fixture)
from tests.tui_live.helpers import SIZE, config, trace_events, wait_for

pytestmark = pytest.mark.slow


async def test_breakpoints_pause_the_live_episode_before_the_next_model_call(tmp_path: Path) -> None:
    app = create_live_app(config(tmp_path, breakpoints=["tool create_file"]))
    async with app.run_test(size=SIZE) as pilot:
        screen = app.live
        agent_turns = lambda: [t.index for t in screen.live_state.turns if t.calls]
        await wait_for(pilot, lambda: screen.episode.ready.is_set() and screen.live_state.status == PAUSED,
                       what="the breakpoint to pause the episode")
        assert agent_turns() == [1, 2]  # turn 2 created handlers.py; turn 3 (the shell call) waits
        hit = next(op for op in screen.live_state.operator_actions if op.action == "break_hit")
        assert hit.turn == 2 and "tool create_file" in hit.text
        await pilot.press("b")
        dialog = app.screen
        assert isinstance(dialog, BreakpointScreen)
        dialog.query_one("#bp-input").value = "tool shell"
        await pilot.press("enter")
        await wait_for(pilot, lambda: dialog._shown == [(1, "tool create_file"), (2, "tool shell")],
                       what="the driver to record the new breakpoint")
        await pilot.press("tab", "home", "d")  # remove #1
        await wait_for(pilot, lambda: dialog._shown == [(2, "tool shell")], what="the removal")
        await pilot.press("escape", "space")  # resume: turn 3's shell call hits #2
        await wait_for(pilot, lambda: len([o for o in screen.live_state.operator_actions if o.action == "break_hit"]) == 2
                       and screen.live_state.status == PAUSED, what="the second hit")
        assert agent_turns() == [1, 2, 3]
        await pilot.press("space")
        await wait_for(pilot, lambda: screen.result is not None, what="the episode to end")
        recorded = [(e["action"], e["details"].get("id"), e["turn"]) for e in trace_events(screen.result.trace_path)
                    if e["type"] == "operator" and e["action"].startswith("break_")]
        assert recorded == [("break_add", 1, 0), ("break_hit", 1, 2), ("break_add", 2, 2), ("break_remove", 1, 2),
                            ("break_hit", 2, 3)]
        assert screen.result.passed
        await pilot.press("q")
