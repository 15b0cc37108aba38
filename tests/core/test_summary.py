"""The streaming summary (``core.summary.Summariser``) says what the reducer's whole state says, keeping only counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from stripebench_tui.core.events import Event
from stripebench_tui.core.state import reduce
from stripebench_tui.core.summary import EpisodeSummary, summarise
from stripebench_tui.core.trace import open_trace
from stripebench_tui.testing import big_trace
from tests.core.call_corners import corner_events, operator_turn
from tests.core.episodes import random_episode, small_episode

ROOT = Path(__file__).resolve().parents[2]
TRACES = sorted(p for p in (ROOT / "replays").iterdir() if (p / "trace.jsonl").is_file()) + [
    ROOT / "tests" / "fixtures" / "traces" / "checkout-migration-400-before-detectors"]


def view(s: EpisodeSummary) -> dict:
    """Everything the summary tables print, as comparable data."""
    return {
        "turns": s.turns, "last_t": s.last_t, "totals": s.totals, "ended": s.ended, "tools": s.tools_used(),
        "verdicts": {k: (c.status, c.weight, c.steps) for k, c in s.verdicts.items()},
        "requests": (s.requests, sorted(s.request_classes.items()), s.request_sources.most_common()),
        "findings": s.findings, "score": s.score(), "counts": s.verdict_counts(),
    }


def same_as_reducer(events: list[Event]) -> None:
    assert view(summarise(events)) == view(EpisodeSummary.of_state(reduce(events, clock=lambda: 0.0)))


@pytest.mark.parametrize("trace", TRACES, ids=lambda p: p.name)
def test_the_summary_of_every_sample_replay_is_the_reducers(trace: Path) -> None:
    same_as_reducer(list(open_trace(trace).iter_events()))


@pytest.mark.parametrize("seed", range(12))
def test_the_summary_of_random_episodes_with_late_results_and_rejections_is_the_reducers(seed: int) -> None:
    same_as_reducer(random_episode(seed))


def test_the_summary_of_a_synthetic_big_trace_is_the_reducers() -> None:
    same_as_reducer(list(big_trace.events(3000)))
    same_as_reducer(small_episode())


def test_call_outcomes_follow_the_reducer_in_its_corner_cases() -> None:
    events = corner_events()
    same_as_reducer(events)
    same_as_reducer(operator_turn())
    s = summarise(events)
    assert s.tools_used() == [("shell", 4, 1), ("edit", 3, 1), ("browser_click", 3, 2), ("zeta", 2, 2), ("alpha", 2, 2),
                              ("view_file", 1, 1)]
    assert s.turns == 9 and s.verdicts["paid"].steps == [(8, "fail"), (9, "pass")] and s.score() == 1.0
    assert (s.requests, dict(s.request_classes), list(s.request_sources)) == (2, {"4xx": 1, "2xx": 1}, ["?", "app"])
