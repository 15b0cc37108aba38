"""The event-source helpers the screen relies on, without a running app."""

from __future__ import annotations

from stripebench_tui.core.state import reduce
from stripebench_tui.tui.search import MESSAGE, OUTPUT, TextMatch, find, hits_in_turn
from stripebench_tui.tui.sources.episode_source import EventListSource, row_for, verdict_change_turns, verdict_changes
from tests.tui.episode import checkout_events


def test_verdict_turns_from_history_match_a_scan_of_the_events() -> None:
    source = EventListSource(checkout_events())
    from_history = verdict_change_turns(reduce(checkout_events()))
    statuses: dict[str, str] = {}
    scanned = [t for t in source.turn_numbers() if verdict_changes(source.events_for_turn(t), statuses)]
    assert from_history == scanned == [0, 4, 6]


def test_row_summarises_a_turn() -> None:
    source = EventListSource(checkout_events())
    row = row_for(2, source.events_for_turn(2))
    assert (row.actor, row.tools, row.status) == ("agent", ("shell",), "failed")
    assert row.start == 4.0 and abs(row.duration - 1.0) < 1e-9
    assert row_for(0, source.events_for_turn(0)).label == "(grader)"


def test_search_orders_messages_before_outputs_and_wraps() -> None:
    source = EventListSource(checkout_events())
    turns = source.turn_numbers()
    hits = hits_in_turn(source, 4, 4, "needle-in-output")
    assert [(h.part, h.line) for h in hits] == [(OUTPUT, 3001)]
    first = find(source, turns, "line_items", TextMatch(0, -1, -1, -1))
    assert (first.position, first.part) == (2, OUTPUT)
    second = find(source, turns, "line_items", first)
    assert (second.position, second.part) == (3, MESSAGE)
    assert find(source, turns, "line_items", second) == first  # wrapped around
    assert find(source, turns, "line_items", first, forward=False) == second  # backwards wraps too
    assert find(source, turns, "no such text", TextMatch(0, -1, -1, -1)) is None


def test_search_reports_progress_and_can_be_cancelled(monkeypatch) -> None:
    import stripebench_tui.tui.search as search

    monkeypatch.setattr(search, "PROGRESS_EVERY", 2)
    source = EventListSource(checkout_events())
    seen: list[tuple[int, int]] = []
    assert find(source, source.turn_numbers(), "absent", TextMatch(0, -1, -1, -1),
                progress=lambda d, t: seen.append((d, t))) is None
    assert seen == [(2, 7), (4, 7), (6, 7)]
    assert find(source, source.turn_numbers(), "line_items", TextMatch(0, -1, -1, -1), cancelled=lambda: True) is None
