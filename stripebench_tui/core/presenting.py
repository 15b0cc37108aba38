"""Pacing of presenter mode: how long each turn stays on screen, with an injectable clock.

A presenter wants the episode to move on by itself, but slowly enough to read,
and to stop a while where something happened. A turn is held for its recorded
duration clamped to [``MIN_HOLD``, ``MAX_HOLD``]; a notable turn (a verdict
changed, a finding was raised) for at least ``DWELL``; all divided by the speed.
The screen calls ``shown()`` after drawing a turn and moves on when ``due()``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from stripebench_tui.core.playback import SPEEDS

MIN_HOLD = 1.5  # wall seconds at speed 1: time to read a turn's caption
MAX_HOLD = 4.0  # a turn that took minutes live does not freeze the demo
DWELL = 6.0  # where a verdict changed or a finding was raised


def hold_for(recorded: float, notable: bool, speed: float) -> float:
    """Wall seconds a turn stays on screen."""
    hold = min(max(recorded, MIN_HOLD), MAX_HOLD)
    if notable:
        hold = max(hold, DWELL)
    return hold / speed


@dataclass
class Pacer:
    """When the presenter advances; paused keeps what was left of the current hold."""

    clock: Callable[[], float] = time.monotonic
    speed: float = 1.0
    playing: bool = True
    deadline: float | None = None  # clock time the current turn is due to give way
    left: float = 0.0  # while paused: what remained of the hold

    def shown(self, recorded: float, notable: bool) -> float:
        """A turn is on screen now; returns how long it stays."""
        hold = hold_for(recorded, notable, self.speed)
        self.deadline = self.clock() + hold
        self.left = hold
        return hold

    def due(self) -> bool:
        return self.playing and self.deadline is not None and self.clock() >= self.deadline

    def remaining(self) -> float:
        if not self.playing or self.deadline is None:
            return self.left
        return max(0.0, self.deadline - self.clock())

    def toggle(self) -> bool:
        """Pause or resume; returns whether it is now playing."""
        if self.playing:
            self.left = self.remaining()
            self.playing = False
        else:
            self.playing = True
            self.deadline = self.clock() + self.left
        return self.playing

    def set_speed(self, speed: float) -> None:
        """Change speed; the time left on the current turn scales with it."""
        left = self.remaining() * self.speed / speed
        self.speed = speed
        self.left = left
        if self.playing and self.deadline is not None:
            self.deadline = self.clock() + left

    def faster(self) -> float:
        self.set_speed(next((s for s in SPEEDS if s > self.speed), SPEEDS[-1]))
        return self.speed

    def slower(self) -> float:
        self.set_speed(next((s for s in reversed(SPEEDS) if s < self.speed), SPEEDS[0]))
        return self.speed


__all__ = ["DWELL", "MAX_HOLD", "MIN_HOLD", "Pacer", "hold_for"]
