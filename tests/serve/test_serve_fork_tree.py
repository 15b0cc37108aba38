"""`serve`'s viewers see the fork tree too (t), read-only: a branch opens as a read-only replay (no fork, resume,
note or pager there either), two branches diff, and nothing is written or run on the server's machine."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stripebench_tui.core.annotations import notes_path
from stripebench_tui.tui.apps.serve_app import ServeApp
from stripebench_tui.tui.screens.diff_screen import DiffScreen
from stripebench_tui.tui.screens.episode_screen import EpisodeScreen
from stripebench_tui.tui.screens.fork_tree import ForkTreeScreen
from stripebench_tui.tui.screens.resume import ResumeScreen
from tests.formats.lineage_family import write_family, write_trace
from tests.tui.episode import checkout_events
from tests.tui_live.helpers import wait_for


def _files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


async def test_a_viewer_sees_the_tree_and_opens_branches_read_only(tmp_path: Path) -> None:
    family = write_family(tmp_path)
    before = _files(tmp_path)
    app = ServeApp("replay", family.original)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, EpisodeScreen) and app.screen.lineage.family is not None,
                       what="the replay and its family")
        episode = app.screen
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, ForkTreeScreen), what="the fork tree")
        tree = app.screen
        assert tree.lineage.forks == 4
        await pilot.press("down", "down", "enter")  # original-fork-2
        await wait_for(pilot, lambda: isinstance(app.screen, EpisodeScreen) and app.screen is not episode,
                       what="the branch")
        branch = app.screen
        assert branch.read_only and branch.trace_path() == family.beside.resolve()
        await wait_for(pilot, lambda: branch.lineage.family is not None, what="the branch's family")
        for key in ("F", "r", "n", "p"):
            await pilot.press(key)
            await pilot.pause()
            assert app.screen is branch, f"{key!r} opened {type(app.screen).__name__}"
        for action in ("fork", "resume", "note", "open_pager"):
            assert await app.run_action(action, branch) is False, action
        await pilot.press("t")  # the branch's own tree: its fork of a fork
        await wait_for(pilot, lambda: isinstance(app.screen, ForkTreeScreen) and app.screen is not tree,
                       what="the branch's tree")
        assert [c.name for c in app.screen.lineage.root.children] == ["again"]
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is branch, what="back in the branch")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is tree, what="back in the tree")
        await pilot.press("m", "down", "m", "d")  # the original against its first fork: reading only
        await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen), what="the diff")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is tree, what="back in the tree")
    assert _files(tmp_path) == before, "nothing written beside the served episodes"
    assert not notes_path(family.beside).exists()


async def test_a_viewer_is_not_offered_a_resume(tmp_path: Path) -> None:
    died = write_trace(tmp_path / "died" / "trace.jsonl", checkout_events()[:-1]).path
    app = ServeApp("replay", died)
    said: list[str] = []
    shown = app.notify

    def notify(message: str, **kwargs: Any) -> None:
        said.append(message)
        shown(message, **kwargs)

    app.notify = notify
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, EpisodeScreen) and app.screen.lineage.family is not None,
                       what="the replay and its family")
        screen = app.screen
        assert screen.lineage.family is not None and not screen.lineage.family.ended
        await pilot.press("r")
        await pilot.pause()
        assert app.screen is screen and not isinstance(app.screen, ResumeScreen)
        assert not any("resume" in s for s in said)
