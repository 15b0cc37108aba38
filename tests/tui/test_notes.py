"""Pilot tests of the note keys: n writes a note beside the trace, b jumps to the next one, B lists them."""

from __future__ import annotations

import hashlib
from pathlib import Path

from stripebench_tui.core.annotations import Annotations, notes_path
from stripebench_tui.tui.apps.replay_app import create_app
from stripebench_tui.tui.screens.note import NoteScreen, NotesListScreen
from stripebench_tui.tui.sources.episode_source import TraceSource
from tests.tui.conftest import SIZE, settle, widget_text


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def turn_of(app) -> int:
    return app.episode.turns[app.episode.position]


async def test_n_notes_a_turn_and_the_note_survives_reopening(trace) -> None:
    before = digest(trace.path)
    sidecars = sorted(p.name for p in (trace.path.parent / (trace.path.name + ".d")).iterdir())
    app = create_app(TraceSource(trace), clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("right", "right", "right")  # turn 3: the fix after the 400
        await settle(pilot)
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, NoteScreen)
        await pilot.press(*"agent ignored the 400", "enter")
        await settle(pilot)
        assert not isinstance(app.screen, NoteScreen)
        assert "3✎" in widget_text(app.episode.timeline)
    assert digest(trace.path) == before  # the trace is byte-for-byte what was recorded
    assert sorted(p.name for p in (trace.path.parent / (trace.path.name + ".d")).iterdir()) == sidecars
    assert [(n.turn, n.text) for n in Annotations(trace.path).notes] == [(3, "agent ignored the 400")]

    # A new app on the same trace shows the note, jumps to it with b and lists it with B.
    app = create_app(TraceSource(trace), clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert turn_of(app) == 0
        assert "3✎" in widget_text(app.episode.timeline)
        await pilot.press("apostrophe")
        await settle(pilot)
        assert turn_of(app) == 3
        await pilot.press("home", "quotation_mark")
        await pilot.pause()
        assert isinstance(app.screen, NotesListScreen)
        await pilot.press("enter")
        await settle(pilot)
        assert turn_of(app) == 3
        # Edit it, then remove it with Ctrl+D.
        await pilot.press("n")
        await pilot.pause()
        assert app.screen.query_one("#note-text").value == "agent ignored the 400"
        await pilot.press(*" twice", "enter")
        await settle(pilot)
        assert Annotations(trace.path).get(3).text == "agent ignored the 400 twice"
        await pilot.press("n")
        await pilot.pause()
        await pilot.press("ctrl+d")
        await settle(pilot)
        assert "3✎" not in widget_text(app.episode.timeline)
    assert Annotations(trace.path).notes == []
    assert digest(trace.path) == before


async def test_an_unreadable_notes_file_is_reported_and_the_replay_still_opens(trace) -> None:
    notes_path(trace.path).write_text("{not json", encoding="utf-8")
    app = create_app(TraceSource(trace), clock=lambda: 0.0)
    seen: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        app.episode.notify = lambda message, **kw: seen.append(message)  # type: ignore[method-assign]
        await settle(pilot)
        await pilot.press("n")
        await pilot.pause()
        assert not isinstance(app.screen, NoteScreen)
        assert any("not a notes file" in m for m in seen)
        assert app.is_running and app.episode.position == 0
    assert notes_path(trace.path).read_text(encoding="utf-8") == "{not json"  # nothing a user has is overwritten
