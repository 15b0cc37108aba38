"""The replay of one recorded episode: its Textual app, the factory tests and commands share, and ``stripebench
replay``'s entry (``run_replay``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from textual import on
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from stripebench_tui.core.trace import Trace
from stripebench_tui.tui.apps.branch_opener import diff_branches, open_branch
from stripebench_tui.tui.apps.fork_opener import open_fork
from stripebench_tui.tui.apps.resume_opener import open_resume
from stripebench_tui.tui.keymaps.keymap import COMMANDS
from stripebench_tui.tui.screens.episode_screen import EpisodeScreen, PlaybackOptions
from stripebench_tui.tui.screens.fork_tree import ForkTreeScreen
from stripebench_tui.tui.sources.episode_source import EpisodeSource, TraceSource
from stripebench_tui.tui.text import clean


class EpisodeApp(App[None]):
    """Shows one ``EpisodeScreen``; every keymap command is also in the command palette."""

    TITLE = "stripebench"
    ENABLE_COMMAND_PALETTE = True
    BINDINGS = [Binding("escape", "leave_branch", "Back", show=False)]

    def on_episode_screen_fork_requested(self, request: EpisodeScreen.ForkRequested) -> None:
        open_fork(self, request)

    @on(EpisodeScreen.ResumeRequested)
    def _resume(self, request: EpisodeScreen.ResumeRequested) -> None:
        open_resume(self, request)

    @on(ForkTreeScreen.OpenBranch)
    def _open_branch(self, request: ForkTreeScreen.OpenBranch) -> None:
        open_branch(self, request.path)

    @on(ForkTreeScreen.DiffBranches)
    def _diff_branches(self, request: ForkTreeScreen.DiffBranches) -> None:
        diff_branches(self, request.a, request.b)

    def action_leave_branch(self) -> None:
        """Esc: from a branch opened in the fork tree back to the tree."""
        if isinstance(self.screen, EpisodeScreen) and sum(isinstance(s, EpisodeScreen) for s in self.screen_stack) > 1:
            self.pop_screen()

    def __init__(self, source: EpisodeSource, options: PlaybackOptions = PlaybackOptions()) -> None:
        super().__init__()
        self.source = source
        self.options = options
        header = source.header
        if header is not None:
            self.sub_title = clean(" · ".join(x for x in (header.title or header.env, header.agent) if x))  # recorded

    def on_mount(self) -> None:
        self.push_screen(EpisodeScreen(self.source, self.options))

    @property
    def episode(self) -> EpisodeScreen:
        """The episode screen (also while a help or palette screen is on top of it)."""
        for screen in reversed(self.screen_stack):
            if isinstance(screen, EpisodeScreen):
                return screen
        raise LookupError("no episode screen")

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        target = screen if isinstance(screen, EpisodeScreen) else None
        if target is None:
            return
        for cmd in COMMANDS:
            if cmd.action == "quit":
                continue  # the built-in Quit command already does this
            yield SystemCommand(cmd.title, cmd.description, lambda a=cmd.action: target.run_action(a))


def create_app(
    source: EpisodeSource,
    *,
    speed: float = 1.0,
    autoplay: bool = False,
    clock: Callable[[], float] = time.monotonic,
    start_turn: int | None = None,
    breakpoints: list[str] | None = None,
    present: bool = False,
) -> EpisodeApp:
    """The app for ``source``; tests pass a fixed clock and a small terminal size to ``run_test``."""
    return EpisodeApp(source, PlaybackOptions(speed=speed, autoplay=autoplay, clock=clock, start_turn=start_turn,
                                              breakpoints=tuple(breakpoints or ()), present=present))


def run_replay(trace: Trace, *, speed: float = 1.0, autoplay: bool = False, breakpoints: list[str] | None = None,
               present: bool = False) -> None:
    """Open the replay TUI on an opened trace (``formats.open.open_episode``) and run until the user quits."""
    options = PlaybackOptions(speed=speed, autoplay=autoplay, breakpoints=tuple(breakpoints or ()), present=present)
    EpisodeApp(TraceSource(trace), options).run()
