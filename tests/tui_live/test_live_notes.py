"""n in a live episode: the note lands beside the trace being written, never in it."""

from __future__ import annotations

from pathlib import Path

import pytest

from stripebench_tui.core.annotations import Annotations, notes_path
from stripebench_tui.core.operator import RUNNING
from stripebench_tui.tui.apps.live_app import create_live_app
from stripebench_tui.tui.screens.note import NoteScreen

from .helpers import SIZE, config, trace_events, wait_for

pytestmark = pytest.mark.slow


async def test_a_note_taken_live_is_kept_beside_the_trace(tmp_path: Path) -> None:
    app = create_live_app(config(tmp_path, agent="human"))  # the human agent waits: the episode stays live
    async with app.run_test(size=SIZE) as pilot:
        screen = app.live
        await wait_for(pilot, lambda: screen.episode.ready.is_set() and screen.live_state.status == RUNNING
                       and screen.turn is not None, what="the driver")
        noted = screen.turn.index
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, NoteScreen), what="the note dialog")
        await pilot.press(*"seeded fine, live note", "enter")
        await wait_for(pilot, lambda: not isinstance(app.screen, NoteScreen), what="the dialog to close")
        trace = screen.trace_path()
        assert trace is not None and notes_path(trace).is_file()
        assert noted in screen.timeline.marked
        await pilot.press("q")
    assert [(n.turn, n.text) for n in Annotations(trace).notes] == [(noted, "seeded fine, live note")]
    assert not any("live note" in str(e) for e in trace_events(trace))  # the trace records the episode, not the note
