"""What the panes show: untrusted text as text, objects and verdicts as of the selected turn, empty traces."""

from __future__ import annotations

from pathlib import Path

from stripebench_tui.core.events import Header
from stripebench_tui.tui.apps.replay_app import create_app
from stripebench_tui.tui.screens.episode_screen import EMPTY
from stripebench_tui.tui.sources.episode_source import EventListSource, TraceSource
from stripebench_tui.tui.widgets.status_bar import StatusBar
from stripebench_tui.tui.widgets.stripe_objects import StripeObjects
from stripebench_tui.tui.widgets.verdicts import Verdicts
from tests.tui.conftest import SIZE, settle, widget_text
from tests.tui.episode import HEADER, checkout_events, write_trace


def row_labels(objects: StripeObjects) -> list[str]:
    return [row.label.plain for row in objects.object_list.rows]


async def test_untrusted_output_is_text_without_control_sequences(make_app) -> None:
    app = make_app(start_turn=1)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        shown = app.episode.detail.output.visible_text()
        assert "[bold]not markup[/bold]" in shown  # markup-like text kept literally
        assert "red text" in shown and "\x1b" not in shown


async def test_objects_as_of_the_selected_turn_with_new_ones_marked(make_app) -> None:
    app = make_app(start_turn=3)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        objects = app.episode.query_one(StripeObjects)
        assert row_labels(objects) == []  # nothing exists before turn 4
        await pilot.press("right")
        labels = row_labels(objects)
        assert "checkout.session (1)" in labels and "price (1)" in labels
        assert any(label.startswith("● cs_test_a1") and "open" in label for label in labels)
        await pilot.press("right")
        labels = row_labels(objects)
        assert any(label.startswith("● cs_test_a1") and "complete" in label for label in labels)
        assert any(label.startswith("  price_1") for label in labels)  # from an earlier turn: not marked
        assert any(label.startswith("● pi_1") for label in labels)


async def test_selecting_an_object_shows_its_json(make_app) -> None:
    app = make_app(start_turn=5)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        objects = app.episode.query_one(StripeObjects)
        # The first object this turn touched is shown without asking.
        assert objects.selected is not None and objects.selected.id == "cs_test_a1"
        json_text = widget_text(objects.query_one("#object-json"))
        assert '"status": "complete"' in json_text
        assert '"amount_total": 2000' in json_text
        objects.object_list.focus()
        await pilot.press("down", "down")
        await pilot.pause()
        assert objects.selected is not None and objects.selected.id == "pi_1"
        assert '"status": "succeeded"' in widget_text(objects.query_one("#object-json"))


async def test_verdicts_show_status_turn_evidence_and_score(make_app) -> None:
    app = make_app(start_turn=4)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        summary = app.episode.query_one(Verdicts).summary
        assert 'session_created: pass (turn 4) {"session": "cs_test_a1"}' in summary
        assert "payment_succeeded: pending (turn 0)" in summary
        assert "score 0.33" in summary  # weights 1 and 2


async def test_status_bar_shows_turn_time_tokens_and_speed(make_app) -> None:
    app = make_app(start_turn=2, speed=2.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        line = app.episode.query_one(StatusBar).line_text
        for part in ("checkout-migration", "oracle", "claude-test", "turn 2/6", "5.0s", "2,206 tok", "$0.0020", "paused", "×2"):
            assert part in line, part


async def test_a_trace_with_zero_turns_shows_a_message(tmp_path: Path) -> None:
    trace = write_trace(tmp_path / "empty.jsonl", events=[])
    app = create_app(TraceSource(trace), clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.episode.detail.message_text == EMPTY
        assert "turn –/0" in app.episode.query_one(StatusBar).line_text
        assert "reading" not in app.episode.query_one(StatusBar).line_text
        await pilot.press("right", "end", "space", "v", "p", "y", "n")  # nothing to act on, nothing breaks
        await settle(pilot)
        assert app.is_running and app.episode.position is None


async def test_in_memory_source_draws_the_same_episode() -> None:
    source = EventListSource([Header(env="checkout-migration", agent="oracle"), *checkout_events()])
    app = create_app(source, clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("end")
        assert "score 1.00" in app.episode.query_one(Verdicts).summary
        assert app.episode.source.header.env == HEADER.env


async def test_an_object_picked_by_the_user_stays_while_they_browse(make_app) -> None:
    app = make_app(start_turn=5)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        objects = app.episode.query_one(StripeObjects)
        objects.object_list.focus()
        await pilot.press("down", "down")
        await pilot.pause()
        assert objects.selected.id == "pi_1"
        app.episode.select(6)  # e.g. playback moving on while the user reads the object
        await settle(pilot)
        assert objects.selected is not None and objects.selected.id == "pi_1"
        app.episode.timeline.focus()
        await pilot.pause()
        app.episode.select(4)
        await settle(pilot)
        assert objects.selected is not None and objects.selected.id == "cs_test_a1"  # follows the turn again


async def test_turns_show_before_the_index_is_built() -> None:
    """A huge trace shows its timeline and first turn at once; state panes fill in when the index is ready."""
    import threading

    class SlowIndex(EventListSource):
        gate = threading.Event()

        def turn_numbers(self) -> list[int]:
            self.gate.wait(10)
            return super().turn_numbers()

    source = SlowIndex([HEADER, *checkout_events()])
    app = create_app(source, clock=lambda: 0.0, start_turn=4)
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(5):
            await pilot.pause()
        screen = app.episode
        assert screen.turn is not None and screen.turn.index == 4
        assert not screen.indexed
        assert "reading the episode…" in screen.query_one(StatusBar).line_text
        assert screen.query_one(Verdicts).summary == ""  # nothing claimed before the state is known
        source.gate.set()
        await settle(pilot)
        assert screen.indexed and screen.turns[screen.position] == 4
        assert "score 0.33" in screen.query_one(Verdicts).summary


def row_keys(objects: StripeObjects) -> list:
    return [row.key for row in objects.object_list.rows]


async def test_a_step_that_changes_no_object_keeps_the_rows_and_updates_their_marks(make_app) -> None:
    app = make_app(start_turn=5)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        objects = app.episode.query_one(StripeObjects)
        keys = row_keys(objects)
        assert any(label.startswith("● pi_1") for label in row_labels(objects))
        await pilot.press("right")  # turn 6 touches no object: the same rows, no marks
        await pilot.pause()
        assert row_keys(objects) == keys
        labels = row_labels(objects)
        assert not any(label.startswith("●") for label in labels)
        assert any(label.startswith("  pi_1") and "succeeded" in label for label in labels)
        assert objects.selected is None
        await pilot.press("left")
        await pilot.pause()
        assert row_keys(objects) == keys
        assert any(label.startswith("● cs_test_a1") and "complete" in label for label in row_labels(objects))
        assert objects.selected is not None and objects.selected.id == "cs_test_a1"
        cursor_row = objects.object_list.cursor_row
        assert cursor_row is not None and cursor_row.data == "cs_test_a1"
        await pilot.press("left")  # turn 4: pi_1 did not exist yet
        await pilot.pause()
        assert not any("pi_1" in label for label in row_labels(objects))
