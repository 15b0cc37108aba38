"""The diff's streaming digest (``core.diff.Digester``) compares episodes exactly as their reducer states would."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import pytest

from stripebench_tui.core.episode_diff import EpisodeDigest, diff_states, digest
from stripebench_tui.core.events import Event, Header
from stripebench_tui.core.state import reduce
from stripebench_tui.core.trace import open_trace
from stripebench_tui.testing import big_trace
from tests.core.call_corners import corner_events, operator_turn
from tests.core.episodes import random_episode

ROOT = Path(__file__).resolve().parents[2]
TRACES = sorted(p for p in (ROOT / "replays").iterdir() if (p / "trace.jsonl").is_file()) + [
    ROOT / "tests" / "fixtures" / "traces" / "checkout-migration-400-before-detectors"]
HEADER = Header(extra={"variables": {"WORKSPACE": "/tmp/run-a"}})


def same_as_reducer(events: list[Event], header: Header = HEADER) -> EpisodeDigest:
    streamed = digest(events, header)
    assert streamed == EpisodeDigest.of_state(reduce([header, *events], clock=lambda: 0.0))
    return streamed


@pytest.mark.parametrize("trace", TRACES, ids=lambda p: p.name)
def test_the_digest_of_every_sample_replay_is_the_reducers(trace: Path) -> None:
    t = open_trace(trace)
    same_as_reducer(list(t.iter_events()), t.header)


def test_the_digest_follows_the_reducer_in_its_corner_cases() -> None:
    for seed in range(12):
        same_as_reducer(random_episode(seed))
    same_as_reducer(list(big_trace.events(2000)))
    corners = same_as_reducer(corner_events())
    assert [c[2] for c in corners.sides[1].calls] == ["rejected"]  # its result, in its own turn, changed nothing
    edited = same_as_reducer(operator_turn())
    assert edited.sides[0].actor == "operator" and edited.sides[0].text == "On it: retrying"
    assert edited.sides[1].calls[0][1] == '{"n": 99}'  # what ran after the edit
    assert edited.timelines["paid"] == (("fail", "pass"), (2, 3))


def test_diffs_of_sample_pairs_are_the_same_from_digests_and_states() -> None:
    traces = [open_trace(p) for p in TRACES[:6]]
    for a, b in combinations(traces, 2):
        from_states = diff_states(a.state_at(None), b.state_at(None))
        from_digests = diff_states(*(digest(t.iter_events(), t.header) for t in (a, b)))
        assert from_digests == from_states
