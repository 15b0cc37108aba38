"""Opening a fork, for every app that shows episodes: the screens ask for one (``EpisodeScreen.ForkRequested``, the
fork key), the app picks the agent that continues, then opens the fork as a live screen."""

from __future__ import annotations

from typing import Any

from textual.app import App

from stripebench_tui.errors import UserError
from stripebench_tui.runtime.checkpoints import checkpoint_at
from stripebench_tui.runtime.fork import fork_config, fork_episode
from stripebench_tui.tui.screens.episode_screen import EpisodeScreen
from stripebench_tui.tui.screens.fork import ForkScreen
from stripebench_tui.tui.screens.live_screen import LiveEpisodeScreen


def open_fork(app: App[Any], request: EpisodeScreen.ForkRequested) -> None:
    """Ask which agent continues, then push a live screen of the fork (the turn's checkpoint restored where the
    episode kept one, else the trace re-executed up to the turn)."""
    trace_path, turn = request.trace_path, request.turn
    if trace_path is None or turn is None:
        app.notify("Select a turn of a recorded episode first.", title="Fork")
        return
    if not trace_path.is_file():
        app.notify(f"No trace file at {trace_path}.", title="Fork", severity="error")
        return

    def chosen(agent: str | None) -> None:
        if agent is None:
            return
        try:
            config = fork_config(trace_path, agent, headless=False)
            live = LiveEpisodeScreen(lambda source: fork_episode(trace_path, turn, config, subscribers=[source]),
                                     exit_app_on_quit=False)
        except UserError as exc:
            app.notify(str(exc), title="Fork", severity="error")
            return
        app.push_screen(live)

    app.push_screen(ForkScreen(turn, restores=checkpoint_at(trace_path, turn) is not None), chosen)
