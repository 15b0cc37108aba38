"""A trace without its turn index: the replay screen paints the first turns while the scan goes on, then keeps
the index for the next open (core/cold_index.py)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from stripebench_tui.core import cold_index, turns_sidecar
from stripebench_tui.core.trace import open_trace
from stripebench_tui.testing import big_trace
from stripebench_tui.tui.apps.replay_app import create_app
from stripebench_tui.tui.screens.episode_screen import FIRST_TURNS
from stripebench_tui.tui.sources.episode_source import TraceSource
from tests.tui.conftest import SIZE, settle
from tests.tui_live.helpers import wait_for


class GatedScan(TraceSource):
    """A trace source whose turn scan stops after ``FIRST_TURNS + 10`` turns until the gate opens."""

    def __init__(self, trace) -> None:
        super().__init__(trace)
        self.gate = threading.Event()
        self.held = threading.Event()
        self.scans = 0

    def scan_turns(self) -> Iterator[int] | None:
        scan = super().scan_turns()
        if scan is None:
            return None
        self.scans += 1
        return self._gated(scan)

    def _gated(self, scan: Iterator[int]) -> Iterator[int]:
        for n, turn in enumerate(scan):
            if n == FIRST_TURNS + 10:
                self.held.set()
                assert self.gate.wait(30)
            yield turn


async def test_a_cold_open_paints_before_the_scan_ends_and_the_next_open_does_not_scan(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRIPEBENCH_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "trace.jsonl"
    big_trace.write(path, 4000)
    assert path.stat().st_size >= cold_index.MIN_BYTES
    all_turns = list(open_trace(path).index().turns)
    source = GatedScan(open_trace(path))
    app = create_app(source, clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.episode
        await wait_for(pilot, lambda: source.held.is_set() and screen.turn is not None, what="the first paint")
        await pilot.pause()
        assert screen.turn.index == all_turns[0]
        assert FIRST_TURNS <= len(screen.turns) <= FIRST_TURNS + 10 and screen.turns == all_turns[: len(screen.turns)]
        assert not screen.indexed and len(screen.turns) < len(all_turns)  # painted with the scan held
        source.gate.set()
        await wait_for(pilot, lambda: screen.indexed, what="the index")
        await settle(pilot)
        assert screen.turns == all_turns
        assert screen.timeline.border_title == f"Turns ({len(all_turns)})"
    stored = turns_sidecar.parse((tmp_path / "trace.jsonl.d" / "turns.idx").read_bytes())
    assert stored is not None and stored.turns == all_turns

    again = GatedScan(open_trace(path))
    again.gate.set()
    app = create_app(again, clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.episode.indexed, what="the index")
        assert app.episode.turns == all_turns
    assert again.scans == 0  # the index written by the first open was used
