"""`serve FOLDER`'s app: the folder's episodes listed; a finished one opens as a replay, a running one attached."""

from __future__ import annotations

from pathlib import Path

from stripebench_tui.tui.apps.serve_app import ServeApp
from stripebench_tui.tui.screens.attached import AttachedScreen
from stripebench_tui.tui.screens.episode_screen import EpisodeScreen
from stripebench_tui.tui.screens.picker import PickerScreen
from tests.tui.conftest import settle
from tests.tui.episode import write_trace


async def test_the_picker_lists_the_folders_episodes_and_opens_them(tmp_path: Path) -> None:
    (tmp_path / "a-finished").mkdir()
    lines = write_trace(tmp_path / "a-finished" / "trace.jsonl").path.read_bytes().splitlines(keepends=True)
    (tmp_path / "b-running.jsonl").write_bytes(b"".join(lines[:-1]))
    (tmp_path / "c-broken.jsonl").write_text("{not json\n")
    app = ServeApp("pick", tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        picker = app.screen
        assert isinstance(picker, PickerScreen)
        assert [(e.name, e.status) for e in picker.entries][:2] == [("a-finished", "passed"), ("b-running.jsonl", "running")]
        assert picker.entries[2].status.startswith("cannot read") and not picker.entries[2].readable
        await pilot.press("enter")  # the finished episode: the replay screen
        await settle(pilot)
        assert isinstance(app.screen, EpisodeScreen) and not isinstance(app.screen, AttachedScreen)
        assert app.screen.turns == list(range(7))
        await pilot.press("escape")
        assert app.screen is picker
        await pilot.press("down", "enter")  # the running one: followed, view only
        await pilot.pause()
        assert isinstance(app.screen, AttachedScreen) and not app.screen.operator
        await pilot.press("escape", "down", "down", "enter")  # the broken one is refused in place
        await pilot.pause()
        assert app.screen is picker
