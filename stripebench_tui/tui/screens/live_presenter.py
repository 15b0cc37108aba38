"""Presenter mode over a live episode: the replay presenter's screen, fed by the stream as it grows.

The same large layout, captions and masking as ``tui.screens.presenter`` (it is
that screen), with the turn list taken again from the ``LiveSource`` on every
tick: each turn is held as the pacer says (``core.presenting``, on the injected
clock), then the presenter moves on if the episode has gone further, or waits
on the newest turn, redrawn as its events arrive, until the next one starts.
Once the episode has ended and its last turn has been held, it stays there.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from textual.widgets import Static

from stripebench_tui.tui.screens.presenter import PresenterScreen
from stripebench_tui.tui.sources.live_source import LiveSource


class LivePresenterScreen(PresenterScreen):
    """Paced, captioned view of a running episode; dismissed with the timeline position reached."""

    TIMELINE_TITLE = "Turns (live)"

    def __init__(self, source: LiveSource, *, start: int | None = None, speed: float = 1.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        turns = source.turn_numbers()
        super().__init__(source, turns, start=len(turns) - 1 if start is None else start, speed=speed, clock=clock)
        self.live_source = source
        self._drawn_version = source.version

    @property
    def ended(self) -> bool:
        return self.live_source.state.ended is not None

    def tick(self) -> None:
        """Take new turns from the stream, then advance as the replay presenter does, waiting at the newest."""
        source = self.live_source
        if source.version != self._drawn_version:
            self._drawn_version = source.version
            first = not self.turns
            self.turns = source.turn_numbers()
            self.whole = source.state_at(None)
            if first and self.turns:
                self.position = 0
                self.show()
                return
            if self.turns and self.position + 1 >= len(self.turns):
                self.show(restart=False)  # the newest turn gained events: draw them, keep its hold
        if self.turns and self.position + 1 >= len(self.turns) and self.pacer.due():
            if self.ended:
                self.pacer.toggle()  # the episode is over and its last turn was held: stay, paused
            self.draw_status()  # else wait here for the next turn (it is due: it goes as soon as one starts)
            return
        super().tick()

    def draw_status(self) -> None:
        super().draw_status()
        if self.turns and self.position + 1 >= len(self.turns) and self.pacer.playing and self.pacer.due():
            status = self.query_one("#p-status", Static)
            number = self.turns[self.position]
            status.update(f"▶ live ×{self.pacer.speed:g} · turn {number}/{number} · waiting for the next turn"
                          " │ Space pause · +/- speed · ←/→ step · Esc back")

    def action_play_pause(self) -> None:
        if not self.pacer.playing and self.position + 1 >= len(self.turns) and not self.ended:
            self.pacer.toggle()  # live: resume where it is, not from the top
            self.draw_status()
            return
        super().action_play_pause()


__all__ = ["LivePresenterScreen"]
