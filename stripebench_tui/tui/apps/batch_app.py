"""The batch grid app: a sweep's grid, with episodes opened on top of it."""

from __future__ import annotations

from pathlib import Path

from textual.app import App

from stripebench_tui.tui.apps.fork_opener import open_fork
from stripebench_tui.tui.screens.batch_grid import BatchGridScreen
from stripebench_tui.tui.screens.episode_screen import EpisodeScreen


class BatchApp(App[None]):
    """The batch grid, with episodes opened on top of it."""

    TITLE = "stripebench batch"

    def on_episode_screen_fork_requested(self, request: EpisodeScreen.ForkRequested) -> None:
        open_fork(self, request)

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root

    def on_mount(self) -> None:
        self.push_screen(BatchGridScreen(self.root))


def run_batch_grid(root: Path) -> None:
    """Open the grid on a batch directory and run until the user quits."""
    BatchApp(root).run()
