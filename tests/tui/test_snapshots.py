"""SVG snapshots of the replay screen at fixed turns and terminal size (update with --snapshot-update)."""

from __future__ import annotations

from pathlib import Path

import pytest

from stripebench_tui.tui.apps.replay_app import create_app
from stripebench_tui.tui.sources.episode_source import TraceSource
from tests.tui.conftest import SIZE, settle
from tests.tui.episode import write_trace


@pytest.fixture
def snapshot_app(tmp_path: Path):
    def factory(start_turn: int):
        # A fixed clock: nothing on screen may depend on wall time.
        return create_app(TraceSource(write_trace(tmp_path / "checkout.jsonl")), clock=lambda: 0.0, start_turn=start_turn)

    return factory


class TestMainScreen:
    def test_turn_with_new_stripe_objects_and_a_verdict(self, snap_compare, snapshot_app) -> None:
        assert snap_compare(snapshot_app(4), terminal_size=SIZE, run_before=settle)

    def test_failed_tool_call(self, snap_compare, snapshot_app) -> None:
        assert snap_compare(snapshot_app(2), terminal_size=SIZE, run_before=settle)

    def test_search_match_highlighted(self, snap_compare, snapshot_app) -> None:
        async def search(pilot) -> None:
            await settle(pilot)
            await pilot.press("slash", *"line_items", "enter")
            await settle(pilot)

        assert snap_compare(snapshot_app(0), terminal_size=SIZE, run_before=search)


class TestHelp:
    def test_help_screen(self, snap_compare, snapshot_app) -> None:
        async def help_(pilot) -> None:
            await settle(pilot)
            await pilot.press("question_mark")
            await pilot.pause()

        assert snap_compare(snapshot_app(1), terminal_size=SIZE, run_before=help_)


class TestForkTree:
    def test_fork_tree_with_a_marked_branch_and_a_bisect(self, snap_compare, tmp_path: Path) -> None:
        from stripebench_tui.formats.bisect_record import BisectRecord, write_bisect
        from stripebench_tui.formats.open import open_episode
        from tests.formats.lineage_family import write_family
        from tests.tui_live.helpers import wait_for

        family = write_family(tmp_path)
        write_bisect(family.original, BisectRecord("oracle", 2, []))
        app = create_app(TraceSource(open_episode(family.original)), clock=lambda: 0.0)

        async def tree(pilot) -> None:
            await settle(pilot)
            await wait_for(pilot, lambda: app.episode.lineage.family is not None, what="the episode's family")
            await pilot.press("t")
            await settle(pilot)
            await pilot.press("down", "down", "m", "down")
            await pilot.pause()

        assert snap_compare(app, terminal_size=SIZE, run_before=tree)
