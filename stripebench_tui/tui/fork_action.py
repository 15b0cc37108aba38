"""The fork key, shared by the replay and live screens: pick an agent, then open the fork as a live screen."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def fork_from_screen(screen: Any, trace_path: Path | None, turn: int | None) -> None:
    """Ask which agent continues, then push a live screen re-executing ``trace_path`` up to ``turn``."""
    from stripebench_tui.tui.screens.fork import ForkScreen

    if trace_path is None or turn is None:
        screen.notify("Select a turn of a recorded episode first.", title="Fork")
        return
    if not Path(trace_path).is_file():
        screen.notify(f"No trace file at {trace_path}.", title="Fork", severity="error")
        return

    def chosen(agent: str | None) -> None:
        if agent is None:
            return
        from stripebench_tui.errors import UserError
        from stripebench_tui.runtime.fork import fork_config, fork_episode
        from stripebench_tui.tui.screens.live_screen import LiveEpisodeScreen

        try:
            config = fork_config(Path(trace_path), agent, headless=False)
            live = LiveEpisodeScreen(lambda source: fork_episode(Path(trace_path), turn, config, subscribers=[source]),
                                     exit_app_on_quit=False)
        except UserError as exc:
            screen.notify(str(exc), title="Fork", severity="error")
            return
        screen.app.push_screen(live)

    screen.app.push_screen(ForkScreen(turn), chosen)
