"""The app a terminal recording films: presenter mode over a range of turns, quitting when the last one has been shown.

``stripebench export --format cast`` runs this module under a pseudo-terminal
(``python -m stripebench_tui.tui.apps.recording_app TRACE …``) and records what
it draws; nobody presses a key, so the presenter's own pacing drives it and its
end ends the recording. Everything it draws is the presenter's, so masked.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

from textual.app import App

from stripebench_tui.core.trace import Trace
from stripebench_tui.formats.open import open_episode
from stripebench_tui.tui.screens.presenter import PresenterScreen
from stripebench_tui.tui.sources.episode_source import EpisodeSource, TraceSource

TURN_FD = "STRIPEBENCH_TURN_FD"  # the recorder's pipe: each turn's number, a line as it is drawn


class RecordedPresenter(PresenterScreen):
    """Presenter mode that says which turn it draws (the recording's markers); no key hints: a viewer has no keys."""

    KEY_HINTS = ""

    def __init__(self, source: EpisodeSource, turns: list[int], *, on_turn: Callable[[int], object], speed: float = 1.0,
                 at_end: Callable[[], object] | None = None) -> None:
        super().__init__(source, turns, speed=speed, at_end=at_end)
        self.on_turn = on_turn
        self.painted = False

    def show(self, restart: bool = True) -> None:
        super().show(restart)
        if restart and self.turns:
            self.on_turn(self.turns[self.position])
            if not self.painted:  # the first turn's hold counts from when it is on screen, not from start-up
                self.call_after_refresh(self._hold_from_now, self.pacer.remaining())

    def _hold_from_now(self, hold: float) -> None:
        self.painted = True
        if self.pacer.playing:
            self.pacer.deadline = self.pacer.clock() + hold


class RecordingApp(App[None]):
    """Presenter mode over ``turns`` at ``speed``; exits after the last turn's hold."""

    TITLE = "stripebench"
    ENABLE_COMMAND_PALETTE = False

    def __init__(self, source: EpisodeSource, turns: list[int], speed: float = 1.0,
                 on_turn: Callable[[int], object] = lambda turn: None) -> None:
        super().__init__()
        self.source = source
        self.turns = turns
        self.speed = speed
        self.on_turn = on_turn
        self.played_to_end = False

    def on_mount(self) -> None:
        self.push_screen(RecordedPresenter(self.source, self.turns, speed=self.speed, at_end=self.the_end,
                                           on_turn=self.on_turn))

    def the_end(self) -> None:
        """The last turn's hold is over: the recording is complete."""
        self.played_to_end = True
        self.exit()


def turns_between(numbers: list[int], first: int | None, last: int | None) -> list[int]:
    """The turn numbers from ``first`` to ``last`` (either open), in order."""
    return [n for n in numbers if (first is None or n >= first) and (last is None or n <= last)]


def create_recording_app(trace: Trace, *, speed: float = 1.0, from_turn: int | None = None,
                         to_turn: int | None = None, on_turn: Callable[[int], object] = lambda turn: None
                         ) -> RecordingApp:
    """The app for ``trace``'s turns from ``from_turn`` to ``to_turn``; tests run it with ``run_test``."""
    source = TraceSource(trace)
    return RecordingApp(source, turns_between(source.turn_numbers(), from_turn, to_turn), speed, on_turn)


def turn_reporter() -> Callable[[int], object]:
    """Writes each turn's number to the recorder's pipe (``TURN_FD``), or nothing when there is none."""
    fd = os.environ.get(TURN_FD, "")
    if not fd.isdigit():
        return lambda turn: None
    pipe = os.fdopen(int(fd), "w", buffering=1, encoding="ascii")
    return lambda turn: pipe.write(f"{turn}\n")


def main(argv: list[str] | None = None) -> int:
    """The recorded child's entry: ``TRACE [--speed S] [--from-turn A] [--to-turn B]``."""

    parser = argparse.ArgumentParser(prog="recording_app", description=__doc__)
    parser.add_argument("trace", type=Path)
    parser.add_argument("--speed", type=float, default=1.0)
    parser.add_argument("--from-turn", type=int, default=None)
    parser.add_argument("--to-turn", type=int, default=None)
    args = parser.parse_args(argv)
    app = create_recording_app(open_episode(args.trace), speed=args.speed, from_turn=args.from_turn,
                               to_turn=args.to_turn, on_turn=turn_reporter())
    app.run()
    # Only a playback that reached its end is a recording (an exception ends the app too, not always with an error code).
    return 0 if app.played_to_end and app.return_code in (None, 0) else 1


if __name__ == "__main__":
    sys.exit(main())
