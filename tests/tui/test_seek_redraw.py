"""Panes keep what they drew for the last few turns: a turn shown again must look exactly as it did the first time."""

from __future__ import annotations

from tests.tui.conftest import SIZE, settle, widget_text

PANES = ("#timeline", "#turn-summary", "#turn-output", "#objects", "#objects-tree", "#object-json", "#verdicts",
         "#verdicts-table", "#status")


def styled_text(widget) -> list[list[tuple[str, str]]]:
    """What a widget draws, line by line: runs of text with the style each is drawn in (colours, bold, reverse…)."""
    from textual.geometry import Region

    out = []
    for line in widget.render_lines(Region(0, 0, widget.size.width, widget.size.height)):
        runs: list[tuple[str, str]] = []
        for segment in line:
            style = str(segment.style) if segment.style else ""
            if runs and runs[-1][1] == style:
                runs[-1] = (runs[-1][0] + segment.text, style)
            elif segment.text:
                runs.append((segment.text, style))
        out.append(runs)
    return out


def panes(app) -> dict[str, object]:
    """What each pane of the episode screen draws, borders and titles included, with the styles it draws in."""
    screen = app.episode
    drawn: dict[str, object] = {selector: styled_text(screen.query_one(selector)) for selector in PANES}
    # The tree's cursor row is not compared: opened at a turn that touches no object the cursor rests on the first
    # row, while a step to such a turn clears it (so it was before panes kept what they drew). Its text is.
    drawn["#objects-tree"] = widget_text(screen.query_one("#objects-tree"))
    for selector in ("#objects", "#verdicts", "#turn-summary", "#turn-output"):  # titles that change with the turn
        title = screen.query_one(selector).border_title
        top = widget_text(screen.query_one(selector)).split("\n")[0]
        assert title and title in top, f"{selector} does not show its title {title!r}"
    return drawn


async def test_a_turn_shown_again_looks_as_a_fresh_draw_of_it(make_app) -> None:
    # What each turn looks like drawn from scratch: an app opened at that turn.
    fresh: list[dict[str, str]] = []
    numbers: list[int] = []
    while True:
        app = make_app(start_turn=len(fresh))
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            numbers = app.episode.turns
            assert app.episode.position == len(fresh)
            fresh.append(panes(app))
        if len(fresh) == len(numbers):
            break
    last = len(numbers) - 1
    assert fresh[0] != fresh[last]  # the panes change along the episode: the comparisons below can fail
    app = make_app(start_turn=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.episode
        # Every turn stepped to, then End and Home back and forth and steps both ways: turns drawn again from
        # what the panes kept must look as drawn anew.
        keys = [("right", p) for p in range(1, last + 1)]
        keys += [("home", 0), ("end", last), ("home", 0), ("end", last), ("left", last - 1), ("left", last - 2),
                 ("right", last - 1), ("home", 0), ("right", 1), ("end", last)]
        for key, position in keys:
            await pilot.press(key)
            await settle(pilot)
            assert screen.position == position
            assert panes(app) == fresh[position], f"turn at row {position} drawn differently after {key!r}"


def marked(view) -> list[str]:
    """The text the verdicts table draws in reverse video: the turn column of criteria the selected turn changed."""
    from textual.geometry import Region

    lines = view.render_lines(Region(0, 0, view.size.width, view.size.height))
    return [seg.text.strip() for line in lines for seg in line if seg.style and seg.style.reverse and seg.text.strip()]


async def test_the_selected_turn_marks_only_the_verdicts_it_changed(make_app) -> None:
    app = make_app(start_turn=4)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.episode.query_one("#verdicts-table")
        assert marked(table) == ["4"]  # turn 4 passed session_created
        await pilot.press("right")  # turn 5 changed no verdict: nothing marked
        await settle(pilot)
        assert marked(table) == []
        await pilot.press("right")  # turn 6 passed payment_succeeded
        await settle(pilot)
        assert marked(table) == ["6"]
        await pilot.press("left", "left")  # back to turn 4: marked again (the table kept for it)
        await settle(pilot)
        assert marked(table) == ["4"]


async def test_titled_panes_keep_the_css_of_the_widgets_they_are_mixed_into(make_app) -> None:
    # TitledPane is mixed in first: it must not cut off the scrolling its host class's default CSS gives.
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.episode
        for selector in ("#verdicts", "#turn-summary", "#turn-output"):
            assert screen.query_one(selector).styles.overflow_y == "auto", selector
