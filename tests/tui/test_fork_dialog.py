"""The fork dialog says what a fork from the chosen turn will do: restore its checkpoint, or re-execute the turns."""

from __future__ import annotations

import pytest
from textual.app import App
from textual.widgets import Label

from stripebench_tui.tui.screens.fork import ForkScreen


class _Host(App[None]):
    def __init__(self, dialog: ForkScreen) -> None:
        super().__init__()
        self.dialog = dialog
        self.chosen: list[str | None] = []

    def on_mount(self) -> None:
        self.push_screen(self.dialog, self.chosen.append)


@pytest.mark.parametrize(("restores", "says", "never"), [
    (True, "Turn 4's checkpoint is restored", "re-executed on a fresh environment"),
    (False, "Turns 1-4 are re-executed on a fresh environment", "checkpoint"),
])
async def test_the_dialog_says_how_the_fork_starts_and_returns_the_agent(restores: bool, says: str, never: str) -> None:
    app = _Host(ForkScreen(4, restores=restores))
    async with app.run_test() as pilot:
        await pilot.pause()
        text = " ".join(str(label.render()) for label in app.dialog.query(Label))
        assert says in text and never not in text
        await pilot.press("down", "enter")  # the second agent of the list
        await pilot.pause()
    assert app.chosen == ["noop"]
