"""Pilot tests: every binding of the replay screen, asserted by its effect on state and screen."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from textual.geometry import Region

from stripebench_tui.tui.keymaps.keymap import COMMANDS, DEFAULT_KEYMAP
from stripebench_tui.tui.screens.help_screen import HelpScreen
from stripebench_tui.tui.widgets.status_bar import StatusBar
from stripebench_tui.tui.widgets.stripe_objects import StripeObjects
from stripebench_tui.tui.widgets.verdicts import Verdicts
from tests.tui.conftest import SIZE, settle


def turn_of(app) -> int:
    s = app.episode
    return s.turns[s.position]


def status(app) -> str:
    return app.episode.query_one(StatusBar).line_text


async def test_opens_on_the_first_turn_with_header_in_status(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert turn_of(app) == 0
        assert "checkout-migration · oracle · claude-test" in status(app)
        assert "turn 0/6" in status(app)  # turn numbers as the detail pane shows them


@pytest.mark.parametrize("key", DEFAULT_KEYMAP["step_forward"])
async def test_step_forward_moves_the_selected_turn(make_app, key) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press(key, key)
        assert turn_of(app) == 2
        assert app.episode.timeline.cursor == 2
        assert "turn 2/6" in status(app)
        assert "Let me try creating a session." in app.episode.detail.message_text


@pytest.mark.parametrize("key", DEFAULT_KEYMAP["step_back"])
async def test_step_back(make_app, key) -> None:
    app = make_app(start_turn=3)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert turn_of(app) == 3
        await pilot.press(key)
        assert turn_of(app) == 2
        await pilot.press(key, key, key, key)
        assert turn_of(app) == 0  # stops at the first turn


@pytest.mark.parametrize("first,last", list(zip(DEFAULT_KEYMAP["first_turn"], DEFAULT_KEYMAP["last_turn"], strict=True)))
async def test_first_and_last(make_app, first, last) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press(last)
        assert turn_of(app) == 6
        # The state drawn is the whole episode: both criteria passed.
        assert "score 1.00" in app.episode.query_one(Verdicts).summary
        await pilot.press(first)
        assert turn_of(app) == 0
        assert "score 0.00" in app.episode.query_one(Verdicts).summary


async def test_timeline_arrows_select_turns(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("down", "down", "j")
        assert turn_of(app) == 3
        await pilot.press("up")
        assert turn_of(app) == 2


@pytest.mark.parametrize("up,down", [("plus", "minus"), ("equals_sign", "minus"),
                                     ("right_square_bracket", "left_square_bracket")])
async def test_speed_up_and_down(make_app, up, down) -> None:
    app = make_app(speed=1.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press(up)
        assert app.episode.playback.speed == 2.0
        assert "×2" in status(app)
        await pilot.press(down, down)
        assert app.episode.playback.speed == 0.5
        assert "×0.5" in status(app)


async def test_play_follows_recorded_time_then_pause(trace) -> None:
    from stripebench_tui.tui.apps.replay_app import create_app
    from stripebench_tui.tui.sources.episode_source import TraceSource

    # Real clock. Turn 0 → 1 is 1 s of episode time: 250 ms at ×4.
    app = create_app(TraceSource(trace), speed=4.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("space")
        assert app.episode.playing
        assert "▶ playing" in status(app)
        await pilot.pause(0.45)
        assert turn_of(app) == 1  # turn 1 → 2 is 3 s away: 750 ms at ×4
        await pilot.press(*["right_square_bracket"] * 4)  # ×64: the rest (~20 s) takes ~0.3 s
        await pilot.pause(0.9)
        assert turn_of(app) == 6  # played to the end …
        assert not app.episode.playing  # … and stopped there
        assert "end of episode" in status(app)
        await pilot.press(*["left_square_bracket"] * 4)  # back to ×4
        await pilot.press("space")  # at the end, play restarts from the top
        assert app.episode.playing and turn_of(app) < 6
        await pilot.press("space")
        assert not app.episode.playing
        where = turn_of(app)
        await pilot.pause(0.3)
        assert turn_of(app) == where  # paused means paused


async def test_playback_at_recorded_speed_waits_for_the_gap(trace) -> None:
    from stripebench_tui.tui.apps.replay_app import create_app
    from stripebench_tui.tui.sources.episode_source import TraceSource

    app = create_app(TraceSource(trace), speed=1.0, autoplay=True, start_turn=1)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.episode.playing  # autoplay
        await pilot.pause(0.3)
        assert turn_of(app) == 1  # the next turn is 3 s away at ×1


async def test_next_verdict_change(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("v")
        await settle(pilot)
        assert turn_of(app) == 4  # session_created turned green
        await pilot.press("v")
        await settle(pilot)
        assert turn_of(app) == 6  # payment_succeeded turned green
        notes = []
        app.episode.notify = lambda message, **kw: notes.append(message)  # type: ignore[method-assign]
        await pilot.press("v")
        await settle(pilot)
        assert turn_of(app) == 6
        assert notes and "No later turn" in notes[0]


async def test_search_finds_and_highlights_a_match_in_output(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash")
        await pilot.press(*"needle-in-output")
        await pilot.press("enter")
        await settle(pilot)
        assert turn_of(app) == 4
        out = app.episode.detail.output
        assert out.lines[out.current_line] == "NEEDLE-IN-OUTPUT at the end"
        assert "NEEDLE-IN-OUTPUT" in out.visible_text()  # scrolled into view
        # The match is drawn in the highlight style.
        y = out.current_line - out.scroll_offset.y
        strip = out.render_line(y)
        styled = [seg for seg in strip if seg.text.lower() == "needle-in-output"]
        assert styled and styled[0].style != strip._segments[-1].style


async def test_search_next_and_previous_match(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"line_items", "enter")
        await settle(pilot)
        assert turn_of(app) == 2  # the 400's message in turn 2's output
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert turn_of(app) == 3  # "needs line_items" in turn 3's message
        assert "line_items" in app.episode.detail.message_text
        await pilot.press("f3")
        await settle(pilot)
        assert turn_of(app) == 2  # wrapped around
        await pilot.press("N")
        await settle(pilot)
        assert turn_of(app) == 3


async def test_search_without_a_match_says_so(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        notes = []
        app.episode.notify = lambda message, **kw: notes.append(message)  # type: ignore[method-assign]
        await pilot.press("slash", *"zzz-nowhere", "enter")
        await settle(pilot)
        assert turn_of(app) == 0
        assert notes and "No match" in notes[0]


async def test_pager_gets_the_current_output(make_app, tmp_path: Path, monkeypatch) -> None:
    record = tmp_path / "paged.txt"
    script = tmp_path / "pager.py"
    script.write_text(f"import sys\nopen({str(record)!r}, 'wb').write(sys.stdin.buffer.read())\n")
    monkeypatch.setenv("PAGER", f"{sys.executable} {script}")
    app = make_app(start_turn=1)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("p")
        await settle(pilot)
    paged = record.read_text()
    assert "return charge()  # legacy Charges API" in paged
    assert "\x1b" not in paged  # control sequences stripped before they reach the terminal
    assert "red text" in paged


async def test_copy_the_current_output_and_say_so(make_app) -> None:
    app = make_app(start_turn=2)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        notes = []
        app.episode.notify = lambda message, **kw: notes.append(message)  # type: ignore[method-assign]
        await pilot.press("y")
        assert "Missing required param: line_items." in app.clipboard
        assert notes and "Copied output of turn 2" in notes[0]


async def test_copy_a_selected_stripe_object(make_app) -> None:
    app = make_app(start_turn=5)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        objects = app.episode.query_one(StripeObjects)
        objects.object_list.focus()
        assert objects.selected is not None and objects.selected.id == "cs_test_a1"  # touched in this turn
        await pilot.press("down", "down")  # the next type, then its newest object
        await pilot.pause()
        assert objects.selected is not None and objects.selected.id == "pi_1"
        await pilot.press("c")
        assert f'"id": "{objects.selected.id}"' in app.clipboard


async def test_help_lists_every_binding(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        widget = app.screen.query_one("#help-table")
        lines = widget.render_lines(Region(0, 0, widget.size.width, widget.size.height))
        text = "\n".join(line.text for line in lines)
        for cmd in COMMANDS:
            assert cmd.title in text
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_command_palette_runs_registry_actions(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        titles = [c.title for c in app.get_system_commands(app.episode)]
        for cmd in COMMANDS:
            assert cmd.title in titles or cmd.action == "quit"
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Last")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(pilot)
        assert turn_of(app) == 6


async def test_quit(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running


def test_every_command_has_a_key_and_an_action() -> None:
    from stripebench_tui.tui.screens.episode_screen import EpisodeScreen

    for cmd in COMMANDS:
        assert DEFAULT_KEYMAP.get(cmd.action), cmd.action
        assert callable(getattr(EpisodeScreen, f"action_{cmd.action}", None)), cmd.action
    bound = {b.action for b in EpisodeScreen.BINDINGS}
    assert bound == {c.action for c in COMMANDS}


async def test_controls_still_work_when_the_timeline_scrolls() -> None:
    """With more turns than lines the timeline is scrollable; its scroll keys must not swallow the controls."""
    from stripebench_tui.core.events import Header, ModelMessage
    from stripebench_tui.tui.apps.replay_app import create_app
    from stripebench_tui.tui.sources.episode_source import EventListSource

    events = [ModelMessage(seq=i, t=float(i), turn=i + 1, text=f"step {i}") for i in range(300)]
    app = create_app(EventListSource(events, Header(env="long")), clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("end")
        assert turn_of(app) == 300
        assert app.episode.timeline.scroll_offset.y > 0  # the cursor row was scrolled into view
        await pilot.press("left", "left")
        assert turn_of(app) == 298
        await pilot.press("home")
        assert turn_of(app) == 1 and app.episode.timeline.scroll_offset.y == 0
        await pilot.press("right")
        assert turn_of(app) == 2
        await pilot.press("pagedown")
        timeline = app.episode.timeline
        assert 30 < turn_of(app) - 2 < 45  # about one screenful (the timeline is ~40 lines tall here)
        assert timeline.scroll_offset.y <= timeline.cursor < timeline.scroll_offset.y + timeline.size.height
        await pilot.press("pageup")
        assert turn_of(app) == 2


async def test_bindings_can_be_rebound_by_action_name(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.set_keymap({"step_forward": "x"})
        await pilot.press("x", "x")
        assert turn_of(app) == 2
        await pilot.press("question_mark")
        widget = app.screen.query_one("#help-table")
        lines = widget.render_lines(Region(0, 0, widget.size.width, widget.size.height))
        step = next(line.text for line in lines if " Step " in line.text)
        assert step.split()[0] == "x"  # the help lists the keys in force
