"""The episode's index is kept out of the garbage collector's walks while the screen is up (tui/heap.py)."""

from __future__ import annotations

import gc

from tests.tui.conftest import SIZE, settle


async def test_the_index_is_frozen_while_the_episode_is_shown_and_thawed_after(make_app) -> None:
    gc.unfreeze()
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.episode.indexed
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0  # handed back to the collector: nothing outlives the screen uncollected


async def test_no_collection_runs_while_a_seek_frame_is_drawn_and_they_resume_after(make_app) -> None:
    collections: list[int] = []

    def count(phase: str, info: dict) -> None:
        if phase == "start":
            collections.append(info["generation"])

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.episode
        gc.callbacks.append(count)
        try:
            screen.action_last_turn()
            assert not gc.isenabled()  # held from the seek …
            garbage = [[i] for i in range(5000)]  # … so that this many new objects trigger nothing
            del garbage
            assert collections == []
            await pilot.pause()  # the frame is drawn
            assert gc.isenabled()
        finally:
            gc.callbacks.remove(count)
    assert gc.isenabled()


async def test_a_collector_turned_off_elsewhere_stays_off(make_app) -> None:
    gc.disable()
    try:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            app.episode.action_last_turn()
            await pilot.pause()
            assert not gc.isenabled()
    finally:
        gc.enable()
