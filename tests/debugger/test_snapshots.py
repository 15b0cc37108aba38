"""SVG snapshots of the debugger's new screens (update with --snapshot-update)."""

from __future__ import annotations

from pathlib import Path

from stripebench_tui.core.episode_diff import diff_states
from stripebench_tui.formats.open import open_episode
from stripebench_tui.tui.apps.diff_app import create_diff_app
from stripebench_tui.tui.apps.replay_app import create_app
from stripebench_tui.tui.sources.episode_source import TraceSource
from tests.tui.conftest import SIZE, settle
from tests.tui.episode import write_trace

REPLAYS = Path(__file__).resolve().parents[2] / "replays"


def test_diff_screen(snap_compare) -> None:
    d = diff_states(open_episode(REPLAYS / "checkout-migration-oracle").state_at(None),
                    open_episode(REPLAYS / "checkout-migration-400").state_at(None))
    assert snap_compare(create_diff_app(d, ("oracle", "400-called-success")), terminal_size=SIZE)


def test_breakpoints_dialog(snap_compare, tmp_path: Path) -> None:
    app = create_app(TraceSource(write_trace(tmp_path / "t.jsonl")), clock=lambda: 0.0, breakpoints=["tool write_file"])

    async def open_both(pilot) -> None:
        await settle(pilot)
        await pilot.press("w")
        await settle(pilot)
        await pilot.press("escape", "b", "tab")  # focus on the list: no blinking cursor in the picture
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=open_both)


def test_time_screen(snap_compare, tmp_path: Path) -> None:
    app = create_app(TraceSource(write_trace(tmp_path / "t.jsonl")), clock=lambda: 0.0)

    async def open_time(pilot) -> None:
        await settle(pilot)
        await pilot.press("w")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=open_time)
