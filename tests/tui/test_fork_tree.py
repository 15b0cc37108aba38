"""Pilot tests: the fork tree (t), opening and diffing its branches, the bisect mark on the timeline and the offer
to resume an episode that ended without an end event (r)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.app import App
from textual.widgets import Tree

from stripebench_tui.core.events import Header
from stripebench_tui.formats.bisect_record import BisectRecord, write_bisect
from stripebench_tui.formats.open import open_episode
from stripebench_tui.tui.apps.replay_app import EpisodeApp, create_app
from stripebench_tui.tui.screens.diff_screen import DiffScreen
from stripebench_tui.tui.screens.episode_screen import EpisodeScreen
from stripebench_tui.tui.screens.fork_tree import ForkTreeScreen
from stripebench_tui.tui.screens.resume import ResumeScreen
from stripebench_tui.tui.sources.episode_source import TraceSource
from tests.formats.lineage_family import write_family, write_trace
from tests.tui.conftest import SIZE, settle, widget_text
from tests.tui.episode import checkout_events
from tests.tui_live.helpers import wait_for


def app_for(path: Path) -> EpisodeApp:
    return create_app(TraceSource(open_episode(path)), clock=lambda: 0.0)


def notes_of(app: App[Any]) -> list[str]:
    """Every notification the app shows from now on (they still show)."""
    said: list[str] = []
    shown = app.notify

    def notify(message: str, **kwargs: Any) -> None:
        said.append(message)
        shown(message, **kwargs)

    app.notify = notify  # (an instance attribute: the screens call app.notify)
    return said


async def family_known(pilot: Any, app: App[Any]) -> EpisodeScreen:
    screen = app.screen
    assert isinstance(screen, EpisodeScreen)
    await wait_for(pilot, lambda: screen.lineage.family is not None, what="the episode's family")
    await settle(pilot)
    return screen


def tree_lines(screen: ForkTreeScreen) -> list[str]:
    """The tree's lines as drawn (inside its border), top to bottom."""
    drawn = widget_text(screen.query_one(Tree)).splitlines()[1:-1]
    return [line.strip("│ ").strip() for line in drawn if line.strip("│ ").strip()]


async def test_t_shows_the_forks_enter_opens_one_and_esc_comes_back(tmp_path: Path) -> None:
    family = write_family(tmp_path)
    app = app_for(family.original)
    said = notes_of(app)
    async with app.run_test(size=SIZE) as pilot:
        episode = await family_known(pilot, app)
        assert any("4 forks: t shows the tree" in s for s in said)
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, ForkTreeScreen), what="the fork tree")
        tree = app.screen
        lines = tree_lines(tree)
        assert "original  failed 0.50" in lines[0] and "⚑ turn 2 · 400-as-success: a 400 called a success" in lines[0]
        assert [line.split("→ ")[1].split("  ")[0] for line in lines[1:]] == ["late", "original-fork-2", "again", "at-3"]
        assert "turn 2 → original-fork-2  passed 1.00  restored" in lines[2]
        assert "turn 3 → again  passed 1.00" in lines[3]  # the fork of the fork, under its parent
        assert "turn 3 → at-3  failed 0.25  re-executed  ⚑ turn 4" in lines[4]
        assert "turn 1 → late  did not end" in lines[1]
        await pilot.press("down", "down", "down", "enter")  # the fork of the fork
        await wait_for(pilot, lambda: isinstance(app.screen, EpisodeScreen) and app.screen is not episode,
                       what="the branch's replay")
        opened = app.screen
        assert opened.trace_path() == family.grandchild.resolve()
        await wait_for(pilot, lambda: opened.indexed, what="the branch indexed")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is tree, what="back in the tree")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is episode, what="back in the episode")


async def test_two_marked_branches_open_in_the_diff_screen(tmp_path: Path) -> None:
    family = write_family(tmp_path)
    app = app_for(family.original)
    said = notes_of(app)
    async with app.run_test(size=SIZE) as pilot:
        await family_known(pilot, app)
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, ForkTreeScreen), what="the fork tree")
        tree = app.screen
        await pilot.press("d")
        assert any("Mark two branches" in s for s in said)  # nothing marked yet
        await pilot.press("down", "down", "m")  # original-fork-2
        await pilot.press("down", "down", "m")  # at-3
        assert tree.marked == [family.beside.resolve(), family.under.resolve()]
        lines = tree_lines(tree)
        assert "[A] turn 2 → original-fork-2" in lines[2] and "[B] turn 3 → at-3" in lines[4]
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen), what="the diff screen")
        diff = app.screen
        assert diff.labels == ("original-fork-2", "at-3")
        assert diff.diff.score == (1.0, 0.25) and not diff.diff.equivalent
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is tree, what="back in the tree")
        await pilot.press("m")  # unmarking the cursor's branch leaves one mark: diffed against the cursor's
        assert tree.marked == [family.beside.resolve()]
        await pilot.press("up", "d")
        await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen), what="the diff of one mark and the cursor")
        assert app.screen.labels == ("original-fork-2", "again")
        await pilot.press("q")  # q too goes back (it would quit a diff opened on its own)
        await wait_for(pilot, lambda: app.screen is tree, what="back in the tree")


async def test_a_fork_shows_its_parent_and_its_own_forks(tmp_path: Path) -> None:
    family = write_family(tmp_path)
    app = app_for(family.beside)
    async with app.run_test(size=SIZE) as pilot:
        await family_known(pilot, app)
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, ForkTreeScreen), what="the fork tree")
        head = widget_text(app.screen.query_one("#fork-tree-head"))
        assert "1 fork of this episode" in head and "forked at turn 2 from" in head
        lines = tree_lines(app.screen)
        assert "original-fork-2  passed 1.00" in lines[0] and "turn 3 → again" in lines[1] and len(lines) == 2
        tree = app.screen
        await pilot.press("u")  # the parent, as a replay over the tree
        await wait_for(pilot, lambda: isinstance(app.screen, EpisodeScreen), what="the parent's replay")
        assert app.screen.trace_path() == family.original.resolve()
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is tree, what="back in the tree")


async def test_an_episode_without_forks_says_so(make_app) -> None:
    app = make_app()
    said = notes_of(app)
    async with app.run_test(size=SIZE) as pilot:
        await family_known(pilot, app)
        assert not any("fork" in s for s in said) and not any("Resume" in s or "resume" in s for s in said)
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, ForkTreeScreen), what="the fork tree")
        tree = app.screen
        assert "0 forks of this episode" in widget_text(tree.query_one("#fork-tree-head"))
        await pilot.press("u")  # an original run has no parent to open
        await pilot.pause()
        assert app.screen is tree


async def test_the_bisect_turn_is_marked_on_the_timeline(trace) -> None:
    write_bisect(trace.path, BisectRecord("oracle", 3, []))
    app = create_app(TraceSource(trace), clock=lambda: 0.0)
    async with app.run_test(size=SIZE) as pilot:
        screen = await family_known(pilot, app)
        assert screen.timeline.bisect_turn == 3
        rows = widget_text(screen.timeline).splitlines()
        assert [r.strip("│ ").split()[0] for r in rows if "⌖" in r] == ["3⌖A"]


async def test_no_bisect_no_mark(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await family_known(pilot, app)
        assert screen.timeline.bisect_turn is None and "⌖" not in widget_text(screen.timeline)


async def test_an_episode_without_an_end_event_is_offered_a_resume(tmp_path: Path) -> None:
    died = write_trace(tmp_path / "died" / "trace.jsonl", checkout_events()[:-1]).path  # no episode_end
    app = app_for(died)
    said = notes_of(app)
    async with app.run_test(size=SIZE) as pilot:
        episode = await family_known(pilot, app)
        assert any("ended without an end event" in s and "r offers to resume" in s for s in said)
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, ResumeScreen), what="the resume dialog")
        assert f"stripebench resume {died.parent} --headless" in widget_text(app.screen.query_one("#resume-command"))
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is episode, what="the dialog cancelled")
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, ResumeScreen), what="the resume dialog again")
        await pilot.press("enter")  # "Resume here, live": this trace kept no checkpoint, which the app says
        await wait_for(pilot, lambda: any("kept no checkpoint" in s for s in said), what="the refusal")
        assert app.screen is episode


async def test_an_ended_episode_is_not_offered_a_resume(make_app) -> None:
    app = make_app()
    said = notes_of(app)
    async with app.run_test(size=SIZE) as pilot:
        episode = await family_known(pilot, app)
        await pilot.press("r")
        await pilot.pause()
        assert app.screen is episode and any("ended: nothing to resume" in s for s in said)


async def test_an_episode_whose_processes_still_run_is_not_resumed(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    from stripebench_tui.runtime.reaper import TAG_VAR
    from tests.tui.episode import HEADER

    tag = f"forktree-test-{os.getpid()}"
    header = Header(**{**{f: getattr(HEADER, f) for f in ("env", "agent", "title", "backend")},
                       "extra": {"process_tag": tag}})
    running = write_trace(tmp_path / "running" / "trace.jsonl", checkout_events()[:-1], header).path
    service = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                               env={**os.environ, TAG_VAR: tag})  # one of its processes, still alive
    try:
        app = app_for(running)
        said = notes_of(app)
        async with app.run_test(size=SIZE) as pilot:
            episode = await family_known(pilot, app)
            await pilot.press("r")
            await wait_for(pilot, lambda: isinstance(app.screen, ResumeScreen), what="the resume dialog")
            await pilot.press("enter")
            await wait_for(pilot, lambda: any("has not died" in s for s in said), what="the refusal")
            assert app.screen is episode and any(f"pid {service.pid}" in s for s in said)
    finally:
        service.kill()
        service.wait()


@pytest.mark.parametrize("key", ["t", "r"])
def test_the_live_screen_keeps_its_own_t_and_r(key: str) -> None:
    from stripebench_tui.tui.keymaps.live_keymap import live_keymap

    bound = [action for action, keys in live_keymap().items() if key in keys]
    assert bound == [{"t": "tool_call", "r": "reject"}[key]]
