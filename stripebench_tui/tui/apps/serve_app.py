"""The app one browser connection of ``stripebench serve`` runs: ``python -m stripebench_tui.tui.apps.serve_app MODE PATH``.

textual-serve starts this once per connection, with Textual's web driver; the
server builds the command line, so a browser can never choose what it runs.
Modes: ``replay TRACE`` (the replay screen), ``attach TRACE [--control-file PATH]``
(follow an episode the server runs; with the control URL, as its operator),
``pick FOLDER`` (a list of the folder's episodes). ``--present`` opens the
presenter view of a replay, or the live presenter of an attached episode
(viewers and the operator alike; P leaves it and opens it again).

Every screen here is read-only (``EpisodeScreen.read_only``): a browser never
forks, resumes, writes notes beside the served trace or runs a pager or any other
process on the server's machine; only the operator's live controls reach the
episode. The fork tree (t) only reads: its branches open as read-only replays.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from pathlib import Path

from textual import on
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from stripebench_tui.formats.open import open_episode
from stripebench_tui.tui.apps.branch_opener import diff_branches, open_branch
from stripebench_tui.tui.keymaps.keymap import COMMANDS
from stripebench_tui.tui.keymaps.live_keymap import live_commands
from stripebench_tui.tui.screens.attached import AttachedScreen
from stripebench_tui.tui.screens.episode_screen import EpisodeScreen, PlaybackOptions
from stripebench_tui.tui.screens.fork_tree import ForkTreeScreen
from stripebench_tui.tui.screens.live_screen import LiveEpisodeScreen
from stripebench_tui.tui.screens.picker import EpisodeEntry, PickerScreen
from stripebench_tui.tui.sources.episode_source import TraceSource

MODES = ("replay", "attach", "pick")


class ServeApp(App[None]):
    """One viewer's app: a replay, an attached live episode, or the folder's list of episodes."""

    TITLE = "stripebench"
    ENABLE_COMMAND_PALETTE = True
    BINDINGS = [Binding("escape", "back", "Back", show=False)]

    def __init__(self, mode: str, path: Path, *, control_url: str | None = None, present: bool = False,
                 speed: float = 1.0) -> None:
        super().__init__()
        self.mode = mode
        self.path = path
        self.control_url = control_url
        self.present = present
        self.speed = speed

    def on_mount(self) -> None:
        if self.mode == "pick":
            self.push_screen(PickerScreen(self.path, self.open_entry))
        elif self.mode == "attach":
            self.push_attached(self.path, self.control_url)
        else:
            self.push_replay(self.path)

    def push_replay(self, path: Path) -> None:

        source = TraceSource(open_episode(path))
        header = source.header
        self.sub_title = "" if header is None else " · ".join(x for x in ((header.title or header.env), header.agent) if x)
        self.push_screen(EpisodeScreen(source, PlaybackOptions(speed=self.speed, present=self.present,
                                                                read_only=True)))

    def push_attached(self, path: Path, control_url: str | None) -> None:

        self.sub_title = "operator" if control_url else "viewer"
        self.push_screen(AttachedScreen(path, control_url, present=self.present, speed=self.speed))

    def open_entry(self, entry: EpisodeEntry) -> None:
        """From the list: a finished episode as a replay, a running one followed (never steered from the list)."""
        if entry.ended:
            self.push_replay(entry.path)
        else:
            self.push_attached(entry.path, None)

    @on(ForkTreeScreen.OpenBranch)
    def _open_branch(self, request: ForkTreeScreen.OpenBranch) -> None:
        """A branch of the fork tree, read-only like every replay here."""
        open_branch(self, request.path, read_only=True)

    @on(ForkTreeScreen.DiffBranches)
    def _diff_branches(self, request: ForkTreeScreen.DiffBranches) -> None:
        diff_branches(self, request.a, request.b)

    async def action_back(self) -> None:
        """Esc: from an episode opened in the list, or in a fork tree, back to it."""
        if not isinstance(self.screen, EpisodeScreen):
            return
        if (self.mode == "pick" and len(self.screen_stack) > 2) or sum(isinstance(s, EpisodeScreen)
                                                                        for s in self.screen_stack) > 1:
            self.pop_screen()

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        if isinstance(screen, LiveEpisodeScreen):
            commands = live_commands()
        elif isinstance(screen, EpisodeScreen):
            commands = list(COMMANDS)
        else:
            return
        for cmd in commands:
            if cmd.action != "quit" and screen.check_action(cmd.action, ()):
                yield SystemCommand(cmd.title, cmd.description, lambda a=cmd.action: screen.run_action(a))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m stripebench_tui.tui.apps.serve_app")
    parser.add_argument("mode", choices=MODES)
    parser.add_argument("path", type=Path)
    parser.add_argument("--control-file", type=Path, default=None,
                        help="attach: a file holding the operator's control URL (kept off the command line)")
    parser.add_argument("--present", action="store_true")
    parser.add_argument("--speed", type=float, default=1.0)
    args = parser.parse_args(argv)
    control = args.control_file.read_text(encoding="utf-8").strip() if args.control_file else None
    ServeApp(args.mode, args.path, control_url=control, present=args.present, speed=args.speed).run()


if __name__ == "__main__":
    main()
