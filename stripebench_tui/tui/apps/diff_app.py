"""``stripebench diff --tui``: the diff screen in an app of its own."""

from __future__ import annotations

from textual.app import App

from stripebench_tui.core.episode_diff import EpisodeDiff
from stripebench_tui.tui.screens.diff_screen import DiffScreen


class DiffApp(App[None]):
    TITLE = "stripebench diff"

    def __init__(self, diff: EpisodeDiff, labels: tuple[str, str]) -> None:
        super().__init__()
        self.diff, self.labels = diff, labels

    def on_mount(self) -> None:
        self.push_screen(DiffScreen(self.diff, self.labels))


def create_diff_app(diff: EpisodeDiff, labels: tuple[str, str]) -> DiffApp:
    return DiffApp(diff, labels)


def run_diff(diff: EpisodeDiff, labels: tuple[str, str]) -> None:
    """Run the diff screen until the user quits."""
    create_diff_app(diff, labels).run()
