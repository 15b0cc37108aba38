"""Presenter mode over a live episode (tiny-shop, oracle): paced on an injected clock, fed by the stream, masked."""

from __future__ import annotations

import re
from itertools import pairwise
from pathlib import Path

import pytest

from stripebench_tui.core.presenting import DWELL
from stripebench_tui.tui.apps.live_app import create_live_app
from stripebench_tui.tui.screens.live_presenter import LivePresenterScreen
from stripebench_tui.tui.screens.live_screen import LiveEpisodeScreen

from .helpers import config, wait_for

pytestmark = pytest.mark.slow
SIZE = (100, 30)  # the replay presenter's layout size
EMAIL = re.compile(r"[A-Za-z0-9._%+-]{2,}@[A-Za-z0-9.-]+\.[a-z]{2,}")  # an address not masked to a•••@…


def drawn(screen: LivePresenterScreen) -> str:
    return "\n".join(str(w.render()) for w in screen.query("Static"))


async def test_live_presenter_paces_the_stream_on_the_injected_clock_and_masks_it(tmp_path: Path) -> None:
    now = [0.0]
    app = create_live_app(config(tmp_path, start_paused=True), present=True, clock=lambda: now[0])
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, LivePresenterScreen), what="presenter mode")
        presenter = app.screen
        live = app.live
        assert isinstance(presenter, LivePresenterScreen) and live is not None
        # Setup done (the graders' pending verdicts are turn 0); the episode waits, paused, for the operator.
        await wait_for(pilot, lambda: live.episode.ready.is_set() and presenter.turns == [0], what="setup")
        await wait_for(pilot, lambda: "Turn 0" in drawn(presenter), what="turn 0 drawn")
        # One agent turn arrives, but turn 0's hold is not over on the presenter's clock: it stays.
        live.episode.driver.step()
        await wait_for(pilot, lambda: presenter.turns[-1:] == [1], what="turn 1 in the stream")
        presenter.tick()
        assert presenter.turns[presenter.position] == 0 and "waiting" not in drawn(presenter)
        now[0] += DWELL  # longer than any hold at speed 1
        presenter.tick()
        await pilot.pause()
        assert presenter.turns[presenter.position] == 1 and "Turn 1 · " in drawn(presenter)
        # Held, and nothing newer: the presenter waits on the newest turn and says so.
        now[0] += DWELL
        presenter.tick()
        await pilot.pause()
        assert presenter.turns[presenter.position] == 1 and "waiting for the next turn" in drawn(presenter)
        # The operator resumes; the episode runs to its end; the clock walks the presenter through every turn.
        live.episode.driver.resume()
        await wait_for(pilot, lambda: live.result is not None, timeout=60, what="the episode to end")
        # (The newest turn's hold was over: the next one showed as soon as it began, at most one per hold.)
        seen = [presenter.position]
        for _ in range(len(presenter.turns) + 2):
            now[0] += DWELL
            presenter.tick()
            await pilot.pause()
            seen.append(presenter.position)
        turns = live.live_state.turns
        assert presenter.turns == [t.index for t in turns] and len(turns) >= 4
        assert seen[-1] == len(turns) - 1 and all(0 <= b - a <= 1 for a, b in pairwise(seen)), seen
        assert not presenter.pacer.playing and "· end" in str(presenter.query_one("#p-status").render())
        assert "The episode ended" in drawn(presenter)  # the caption of the last turn
        # What an audience sees: no secret of the episode, no whole e-mail address, on any turn.
        secrets = [s for s in live.episode.secrets() if len(s) >= 8]
        assert secrets
        for position in range(len(presenter.turns)):
            presenter.position = position
            presenter.show()
            await pilot.pause()
            text = drawn(presenter)
            assert not [s for s in secrets if s in text] and not EMAIL.findall(text), (position, text)
        # P leaves presenter mode, back on the live screen at the turn it showed.
        await pilot.press("P")
        await wait_for(pilot, lambda: isinstance(app.screen, LiveEpisodeScreen), what="the live screen")
        assert live.turn is not None and live.turn.index == presenter.turns[-1]
        await pilot.press("q")


async def test_the_P_key_opens_presenter_mode_on_the_live_screen(tmp_path: Path) -> None:
    app = create_live_app(config(tmp_path, start_paused=True), clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        live = app.live
        assert live is not None
        await wait_for(pilot, lambda: live.episode.ready.is_set() and bool(live.turns), what="setup")
        await pilot.press("P")
        await wait_for(pilot, lambda: isinstance(app.screen, LivePresenterScreen) and "Turn 0" in drawn(app.screen),
                       what="presenter mode drawn")
        assert app.screen.turns == [0] and app.screen.query_one("#p-timeline").border_title == "Turns (live)"
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is live, what="the live screen")
        await pilot.press("q")
