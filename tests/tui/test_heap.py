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
