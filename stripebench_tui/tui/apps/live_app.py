"""``stripebench run``'s TUI: a live episode on the live screen.

``run_live(config)`` opens the app, plays the episode, and returns the CLI's exit
code once the user quit (quitting stops the episode first; the trace is kept).
``create_live_app`` is the factory tests use with ``run_test``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import App, SystemCommand
from textual.screen import Screen

from stripebench_tui.errors import EXIT_EPISODE_FAILED, UserError
from stripebench_tui.runtime.episode import Episode
from stripebench_tui.runtime.fork import fork_episode
from stripebench_tui.tui.apps.fork_opener import open_fork
from stripebench_tui.tui.keymaps.live_keymap import live_commands
from stripebench_tui.tui.screens.episode_screen import EpisodeScreen
from stripebench_tui.tui.screens.live_screen import LiveEpisodeScreen
from stripebench_tui.tui.sources.live_source import LiveSource

if TYPE_CHECKING:  # the command loads the runtime only when it runs an episode
    from stripebench_tui.runtime.episode import EpisodeConfig


class LiveApp(App[Any]):
    """Shows one ``LiveEpisodeScreen``; every live command is also in the command palette."""

    TITLE = "stripebench"
    ENABLE_COMMAND_PALETTE = True

    def on_episode_screen_fork_requested(self, request: EpisodeScreen.ForkRequested) -> None:
        open_fork(self, request)

    def __init__(self, config: EpisodeConfig, fork: tuple[Path, int | None] | None = None, *, present: bool = False,
                 clock: Callable[[], float] | None = None) -> None:
        super().__init__()
        self.config = config
        self.fork = fork
        self.present = present  # presenter mode from the start (`stripebench run ENV --present`)
        self.clock = clock  # presenter pacing; tests inject one
        env = config.env if isinstance(config.env, str) else getattr(config.env, "id", "")
        self.sub_title = " · ".join(x for x in (str(env), f"agent {config.agent}",
                                                 f"fork of turn {fork[1]}" if fork else "") if x)
        self.live: LiveEpisodeScreen | None = None

    def make_episode(self, source: LiveSource) -> Any:
        """The episode this app plays, with ``source`` subscribed to its bus."""
        if self.fork is not None:

            return fork_episode(self.fork[0], self.fork[1], self.config, subscribers=[source])

        episode = Episode(self.config, subscribers=[source])
        episode.prepare()  # an unknown env or agent is a UserError before anything starts
        return episode

    def on_mount(self) -> None:
        self.live = LiveEpisodeScreen(self.make_episode, present=self.present, clock=self.clock)
        self.push_screen(self.live)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        if not isinstance(screen, LiveEpisodeScreen):
            return
        for cmd in live_commands():
            if cmd.action == "quit":
                continue  # the built-in Quit goes through action_quit below
            yield SystemCommand(cmd.title, cmd.description, lambda a=cmd.action: screen.run_action(a))

    async def action_quit(self) -> None:
        """Quit (also the palette's Quit): every live screen's episode is stopped and awaited first."""
        for screen in reversed(self.screen_stack):
            if isinstance(screen, LiveEpisodeScreen):
                await screen.stop_and_wait()
        self.exit(self.live.result if self.live is not None else None)


def create_live_app(config: EpisodeConfig, fork: tuple[Path, int | None] | None = None, *, present: bool = False,
                    clock: Callable[[], float] | None = None) -> LiveApp:
    """The live app for ``config`` (forking ``fork=(trace, turn)`` when given; in presenter mode if ``present``)."""
    return LiveApp(config, fork, present=present, clock=clock)


def run_live(config: EpisodeConfig, fork: tuple[Path, int | None] | None = None, *, present: bool = False) -> int:
    """Run the live TUI until the user quits; the exit code (0 passed, 1 failed or stopped, 4 setup failed)."""

    if fork is None:
        Episode(config).prepare()  # unknown env/agent/key: one line before the screen opens
    app = create_live_app(config, fork, present=present)
    result = app.run()
    live = app.live
    if live is not None and live.error and result is None:
        raise UserError(live.error)
    if result is None:
        return EXIT_EPISODE_FAILED
    if result.trace_path is not None:
        print(f"trace: {result.trace_path}", file=sys.stderr)
    if result.setup_failed:
        print(f"stripebench: {result.error}", file=sys.stderr)
    return int(result.exit_code)
