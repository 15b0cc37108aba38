"""The Stripe-objects list: seeks that keep the row count lay nothing out; keys and clicks move its cursor."""

from __future__ import annotations

import pytest
from textual.widget import Widget

from stripebench_tui.core.events import Event, StripeObject
from stripebench_tui.tui.apps.replay_app import create_app
from stripebench_tui.tui.sources.episode_source import EventListSource
from stripebench_tui.tui.widgets import stripe_objects
from stripebench_tui.tui.widgets.stripe_objects import StripeObjects
from tests.tui.conftest import SIZE, settle, widget_text
from tests.tui.episode import HEADER, _turn


def customers_episode(per_turn: list[int]) -> list[Event]:
    """Turn n (from 1) creates per_turn[n-1] customers; customer ids count up across the episode."""
    events: list[Event] = []
    made = 0
    for turn, count in enumerate(per_turn, start=1):
        _turn(events, turn, turn * 2.0, f"turn {turn}", "shell", {"command": "true"}, "ok")
        for _ in range(count):
            made += 1
            events.append(StripeObject(t=turn * 2.0 + 1, turn=turn, object_id=f"cus_{made:03d}", object_type="customer",
                                       data={"id": f"cus_{made:03d}", "object": "customer"}))
    return events


def app_for(events: list[Event], start_turn: int):
    return create_app(EventListSource([HEADER, *events]), clock=lambda: 0.0, start_turn=start_turn)


def plain(objects: StripeObjects) -> list[str]:
    return [row.label.plain for row in objects.object_list.rows]


def record_layouts(monkeypatch, within: Widget) -> list[Widget]:
    """Every refresh(layout=True) asked for by ``within`` or a widget inside it, from now on."""
    asked: list[Widget] = []
    refresh = Widget.refresh

    def recording(self, *regions, repaint=True, layout=False, recompose=False):  # type: ignore[no-untyped-def]
        if layout and within in self.ancestors_with_self:
            asked.append(self)
        return refresh(self, *regions, repaint=repaint, layout=layout, recompose=recompose)

    monkeypatch.setattr(Widget, "refresh", recording)
    return asked


async def test_a_seek_that_changes_the_objects_but_not_the_row_count_lays_nothing_out(monkeypatch) -> None:
    monkeypatch.setattr(stripe_objects, "PER_TYPE", 1)  # one object per type, then "… N older"
    app = app_for(customers_episode([1, 1, 1, 1]), start_turn=2)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        objects = app.episode.query_one(StripeObjects)
        view = objects.object_list
        assert plain(objects) == ["customer (2)", "● cus_002", "  … 1 older"]
        size = view.virtual_size
        asked = record_layouts(monkeypatch, objects)
        await pilot.press("end")  # turn 4: other rows, as many
        await settle(pilot)
        assert app.episode.turns[app.episode.position] == 4
        assert plain(objects) == ["customer (4)", "● cus_004", "  … 3 older"]
        assert "cus_004" in widget_text(view) and "3 older" in widget_text(view)  # drawn, not only held
        assert objects.selected is not None and objects.selected.id == "cus_004"
        assert view.virtual_size == size
        assert asked == []
        await pilot.press("left")  # and back
        await settle(pilot)
        assert plain(objects) == ["customer (3)", "● cus_003", "  … 2 older"]
        assert asked == []
        await pilot.press("home")  # turn 1: one row fewer, a new height: that lays out (the probe sees it)
        await settle(pilot)
        assert plain(objects) == ["customer (1)", "● cus_001"]
        assert view in asked


async def test_a_step_that_only_changes_marks_lays_nothing_out(make_app, monkeypatch) -> None:
    app = make_app(start_turn=5)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        objects = app.episode.query_one(StripeObjects)
        # The list only (the JSON pane's own height changes: the hint is one line, the JSON was more).
        asked = record_layouts(monkeypatch, objects.object_list)
        await pilot.press("right")  # turn 6 touches no object: the marks go
        await settle(pilot)
        assert not any(label.startswith("●") for label in plain(objects))
        assert objects.object_list.cursor is None
        assert asked == []


async def test_keys_move_the_cursor_and_the_json_follows(make_app) -> None:
    app = make_app(start_turn=5)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        objects = app.episode.query_one(StripeObjects)
        view = objects.object_list
        assert plain(objects) == ["checkout.session (1)", "● cs_test_a1  complete", "payment_intent (1)", "● pi_1  succeeded",
                                  "price (1)", "  price_1"]
        assert view.cursor == 1  # the first object the turn touched
        view.focus()
        await pilot.press("down")  # a type's header: no object
        assert view.cursor == 2 and objects.selected is None
        assert "Select an object to see its JSON." in widget_text(objects.query_one("#object-json"))
        await pilot.press("down")
        assert view.cursor == 3 and objects.selected is not None and objects.selected.id == "pi_1"
        assert '"status": "succeeded"' in widget_text(objects.query_one("#object-json"))
        await pilot.press("pagedown")  # a page is more than the rows left: the last row
        assert view.cursor == 5 and objects.selected.id == "price_1"
        await pilot.press("up")
        assert view.cursor == 4 and objects.selected is None
        await pilot.press("pageup")
        assert view.cursor == 0
        await pilot.press("up")  # at the top: stays
        assert view.cursor == 0
        # Every row is in view: Home/End are the screen's, as for any pane with nothing to scroll.
        await pilot.press("end")
        await settle(pilot)
        assert app.episode.turns[app.episode.position] == 6


async def test_a_click_picks_a_row(make_app) -> None:
    app = make_app(start_turn=5)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        objects = app.episode.query_one(StripeObjects)
        view = objects.object_list
        assert await pilot.click("#objects-tree", offset=(6, 5))  # "  price_1"
        await pilot.pause()
        assert view.cursor == 5 and objects.selected is not None and objects.selected.id == "price_1"
        assert '"unit_amount": 2000' in widget_text(objects.query_one("#object-json"))
        assert await pilot.click("#objects-tree", offset=(3, 2))  # "payment_intent (1)"
        await pilot.pause()
        assert view.cursor == 2 and objects.selected is None
        assert "Select an object to see its JSON." in widget_text(objects.query_one("#object-json"))
        assert await pilot.click("#objects-tree", offset=(6, 3))  # "pi_1"
        await pilot.pause()
        assert objects.selected is not None and objects.selected.id == "pi_1"
        app.episode.select(6)  # the list has the focus (the click gave it): the pick stays
        await settle(pilot)
        assert objects.selected is not None and objects.selected.id == "pi_1" and view.cursor_row.data == "pi_1"


@pytest.mark.parametrize("key", ["end", "pagedown"])
async def test_the_cursor_row_is_scrolled_into_view(key: str) -> None:
    app = app_for(customers_episode([30]), start_turn=1)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        objects = app.episode.query_one(StripeObjects)
        view = objects.object_list
        height = view.scrollable_content_region.height
        assert len(view.rows) == 31 > height  # taller than the view: Home/End move the cursor
        assert view.cursor == 1 and view.scroll_offset.y == 0  # the newest customer, first
        view.focus()
        await pilot.press(key)
        await pilot.pause()
        assert view.cursor is not None and view.cursor >= height  # below the first page
        assert view.scroll_offset.y <= view.cursor < view.scroll_offset.y + height
        assert objects.selected is not None and objects.selected.id == view.cursor_row.data
        assert objects.selected.id in widget_text(view)  # the cursor row is drawn
        await pilot.press("home")
        await pilot.pause()
        assert view.cursor == 0 and view.scroll_offset.y == 0 and app.episode.turns[app.episode.position] == 1


def backgrounds(view) -> list[object]:
    """The background each line's padding (its last cell) is drawn in."""
    from textual.geometry import Region

    lines = view.render_lines(Region(0, 0, view.size.width, len(view.rows)))
    return [list(line)[-1].style.bgcolor for line in lines]


async def test_the_row_under_the_mouse_is_highlighted_a_header_with_its_group(make_app) -> None:
    app = make_app(start_turn=5)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        view = app.episode.query_one(StripeObjects).object_list
        plain_bg = backgrounds(view)
        assert len(set(plain_bg)) == 1
        await pilot.hover("#objects-tree", offset=(3, 2))  # "payment_intent (1)": it and its object
        await pilot.pause()
        lit = [bg != plain_bg[0] for bg in backgrounds(view)]
        assert lit == [False, False, True, True, False, False]
        await pilot.hover("#objects-tree", offset=(6, 5))  # "  price_1": that row only
        await pilot.pause()
        assert [bg != plain_bg[0] for bg in backgrounds(view)] == [False] * 5 + [True]
