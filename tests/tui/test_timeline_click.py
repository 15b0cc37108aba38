"""A click on a timeline row selects the turn drawn on that row (the border row above the first is not a turn)."""

from __future__ import annotations

from tests.tui.conftest import SIZE, settle


async def test_clicking_a_row_selects_the_turn_drawn_there(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.episode
        await pilot.click("#timeline", offset=(4, 1 + 3))  # row 0 is the border with the title
        await settle(pilot)
        assert screen.turn.index == 3
        await pilot.click("#timeline", offset=(4, 0))  # the border: nothing changes
        await settle(pilot)
        assert screen.turn.index == 3
