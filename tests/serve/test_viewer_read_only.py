"""A ``serve`` connection's app is read-only: no fork, no resume, no note, no pager or other process, whatever key or command
a viewer (or the live episode's operator) tries; the operator's live controls still reach the episode."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from textual.app import App

from stripebench_tui.core.annotations import notes_path
from stripebench_tui.tui.apps.serve_app import ServeApp
from stripebench_tui.tui.screens import episode_screen
from stripebench_tui.tui.screens.attached import AttachedScreen
from stripebench_tui.tui.screens.episode_screen import EpisodeScreen
from tests.tui.episode import write_trace
from tests.tui_live.helpers import wait_for

WRITING_ACTIONS = frozenset({"fork", "note", "open_pager", "resume"})

REPLAY = Path(__file__).resolve().parents[2] / "replays" / "checkout-migration-400"


@pytest.fixture
def no_processes(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every process the app would start (the pager runs through ``subprocess.run``; a fork through the runtime)."""
    started: list[object] = []

    def record(*args: object, **kwargs: object) -> subprocess.CompletedProcess[bytes]:
        started.append(args)
        return subprocess.CompletedProcess(args, 0)

    monkeypatch.setattr(episode_screen.subprocess, "run", record)
    return started


async def _try_everything(app: App[None], pilot: object, screen: EpisodeScreen) -> None:
    """Each writing action by its key, by ``run_action`` (what the command palette calls) and by the palette's list."""
    for key in ("F", "n", "p", "r"):
        await pilot.press(key)  # type: ignore[attr-defined]
        await pilot.pause()  # type: ignore[attr-defined]
        assert app.screen is screen, f"{key!r} opened {type(app.screen).__name__}"
    for action in sorted(WRITING_ACTIONS):
        assert await app.run_action(action, screen) is False, action
        assert app.screen is screen
    offered = {command.title for command in app.get_system_commands(screen)}
    assert not offered & {"Fork", "Note", "Pager", "Resume"}, offered
    assert {"Requests", "Findings"} <= offered  # what only reads is still there
    shown = {binding.action for _key, binding, enabled, _tip in app.active_bindings.values()
             if binding.show and enabled}
    assert not shown & WRITING_ACTIONS


async def test_a_replay_viewer_cannot_fork_note_or_run_a_pager(tmp_path: Path, no_processes: list[object]) -> None:
    served = tmp_path / "served"
    shutil.copytree(REPLAY, served)
    trace = served / "trace.jsonl"
    app = ServeApp("replay", trace)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, EpisodeScreen) and app.screen.indexed, what="the replay")
        screen = app.screen
        screen._go(2)  # a turn is selected: fork, note and pager would each have something to act on
        await pilot.pause()
        assert screen.turn is not None and screen.detail.output_text
        await _try_everything(app, pilot, screen)
        # what a viewer may do still works: step, search, the request log
        await pilot.press("right")
        await pilot.press("R")
        await wait_for(pilot, lambda: app.screen is not screen, what="the request log")
    assert not notes_path(trace).exists(), "nothing written beside the served trace"
    assert no_processes == []


async def test_an_episode_opened_from_the_folder_list_is_read_only_too(tmp_path: Path,
                                                                        no_processes: list[object]) -> None:
    shutil.copytree(REPLAY, tmp_path / "one")
    app = ServeApp("pick", tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(pilot, lambda: app.screen.query("DataTable"), what="the list")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, EpisodeScreen) and app.screen.indexed, what="the replay")
        await _try_everything(app, pilot, app.screen)
    assert not notes_path(tmp_path / "one" / "trace.jsonl").exists() and no_processes == []


@pytest.mark.parametrize("control_url", [None, "http://127.0.0.1:9/control/token"], ids=["viewer", "operator"])
async def test_an_attached_live_episode_is_read_only_for_viewers_and_its_operator(
        tmp_path: Path, control_url: str | None, no_processes: list[object]) -> None:
    lines = write_trace(tmp_path / "whole.jsonl").path.read_bytes().splitlines(keepends=True)
    running = tmp_path / "running.jsonl"
    running.write_bytes(b"".join(lines[:-1]))  # a live episode: no episode_end yet
    app = ServeApp("attach", running, control_url=control_url)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, AttachedScreen) and app.screen.turns[-1:] == [6],
                       what="the attached screen with the trace's turns")
        screen = app.screen
        assert screen.operator is (control_url is not None)
        await _try_everything(app, pilot, screen)
        # the operator keeps the live controls (the viewer is told they need the operator's link)
        assert screen.check_action("toggle_pause", ()) and screen.check_action("inject", ())
    assert not notes_path(running).exists() and no_processes == []
