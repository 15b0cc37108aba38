"""The live screen attached to an episode another process runs (``stripebench serve``): view only, or its operator.

Everything on screen comes from the episode's trace (``tui.follow``); the keys
that steer the episode work only in the operator's app, which sends them to the
server. Quitting (or closing the browser tab) leaves the episode running. The
screen is read-only for everyone (``EpisodeScreen.read_only``): no fork, note or
pager, the operator included.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stripebench_tui.core.operator import ENDED, status_from_state
from stripebench_tui.tui.screens.live_screen import LiveEpisodeScreen
from stripebench_tui.tui.sources.follow import AttachedEpisode
from stripebench_tui.tui.sources.live_source import LiveSource

VIEW_ONLY = "view only: pausing, injecting and approving need the operator's link"


class AttachedScreen(LiveEpisodeScreen):
    """``LiveEpisodeScreen`` over an ``AttachedEpisode``."""

    def __init__(self, trace: Path, control_url: str | None = None, *, present: bool = False,
                 speed: float = 1.0) -> None:
        def make(source: LiveSource) -> AttachedEpisode:
            return AttachedEpisode(trace, source, control_url, on_error=self._control_problem)

        super().__init__(make, exit_app_on_quit=True, present=present, present_speed=speed)
        # The operator steers the episode through the server; nobody writes beside its trace or starts processes
        # on the server's machine from a browser (forks and notes are for the terminal that runs the episode).
        self.read_only = True

    @property
    def operator(self) -> bool:
        return self.episode.driver is not None

    def _control_problem(self, text: str) -> None:
        self.notify(text, title="Controls", severity="error")

    def _need_driver(self) -> Any:
        if not self.operator:
            self.notify(VIEW_ONLY[0].upper() + VIEW_ONLY[1:] + ".", title="Controls", severity="warning")
            return None
        if self.result is not None or status_from_state(self.live_state) == ENDED:
            self.notify("The episode has ended.", title="Controls")
            return None
        return self.episode.driver

    @property
    def driver(self) -> Any:
        return self.episode.driver

    def action_stop_episode(self) -> None:
        driver = self._need_driver()
        if driver is not None:
            self.note = "stopping the episode…"
            driver.stop("stopped by the operator")
            self.refresh_status()

    def trace_path(self) -> Path | None:
        return self.episode.follower.path

    def refresh_status(self) -> None:
        if self.error and self.note == VIEW_ONLY:
            self.note = ""  # why the episode failed comes first ("problem: …")
        elif not self.note and not self.operator and not self.error:
            self.note = VIEW_ONLY
        super().refresh_status()

    async def action_quit(self) -> None:
        """Leave; the episode goes on for the other viewers (the operator stops it with the stop key)."""
        self.app.exit(self.result)

    async def stop_and_wait(self) -> None:
        """Nothing to wait for: the episode's processes belong to the server."""


__all__ = ["AttachedScreen", "VIEW_ONLY"]
