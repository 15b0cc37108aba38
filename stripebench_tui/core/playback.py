"""Pacing of a replay: when to show the next turn, following recorded time scaled by speed.

Pure logic with an injectable clock, so it can be tested without an event loop or
sleeping. The TUI asks ``delay_until(t)`` how long to wait before showing the turn
that starts at episode time ``t`` and schedules a timer for it.
"""

from __future__ import annotations

import bisect
import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

# Speed steps for faster/slower; 1.0 is recorded time.
SPEEDS: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0)
PLAYING, PAUSED = "playing", "paused"
MAX = math.inf  # "max" speed: every turn at once, one frame each, recorded gaps ignored
PRESETS: tuple[float, ...] = (1.0, 2.0, 8.0, MAX)  # the speeds the number keys pick


def speed_label(speed: float) -> str:
    return "max" if math.isinf(speed) else f"{speed:g}×"


def _nearest_step(speed: float) -> int:
    return min(range(len(SPEEDS)), key=lambda i: abs(SPEEDS[i] - speed))


@dataclass
class Playback:
    """Play state and speed of a replay, anchored to a point in episode time.

    While playing, episode time advances as ``anchor_t + (clock() - anchor_wall) * speed``.
    ``max_wait`` caps how long (wall seconds) a single recorded gap may take, so a
    trace that waited minutes on a model does not look frozen; ``None`` keeps gaps whole.
    """

    clock: Callable[[], float] = time.monotonic
    speed: float = 1.0
    max_wait: float | None = None
    playing: bool = False
    anchor_t: float = 0.0
    anchor_wall: float = field(default=0.0)

    def __post_init__(self) -> None:
        if self.speed <= 0:
            raise ValueError("speed must be positive")
        self.anchor_wall = self.clock()

    @property
    def state(self) -> str:
        return PLAYING if self.playing else PAUSED

    def episode_time(self) -> float:
        """Where playback is now, in seconds of episode time."""
        if not self.playing or math.isinf(self.speed):  # at max speed the playhead moves only by seek
            return self.anchor_t
        return self.anchor_t + max(0.0, self.clock() - self.anchor_wall) * self.speed

    def seek(self, t: float) -> None:
        """Move the playhead to episode time ``t`` (e.g. after a step or jump)."""
        self.anchor_t = t
        self.anchor_wall = self.clock()

    def play(self, t: float | None = None) -> None:
        """Start playing from ``t`` (default: where the playhead is)."""
        self.seek(self.episode_time() if t is None else t)
        self.playing = True

    def pause(self) -> None:
        self.seek(self.episode_time())
        self.playing = False

    def toggle(self, t: float | None = None) -> bool:
        """Play if paused, pause if playing; returns whether it is now playing."""
        if self.playing:
            self.pause()
        else:
            self.play(t)
        return self.playing

    def set_speed(self, speed: float) -> None:
        if speed <= 0:
            raise ValueError("speed must be positive")
        # Re-anchor first so that time already played keeps the old speed.
        self.seek(self.episode_time())
        self.speed = speed

    def faster(self) -> float:
        """Next speed step up (stays at the top step); returns the new speed."""
        if math.isinf(self.speed):
            return self.speed
        i = _nearest_step(self.speed)
        if SPEEDS[i] <= self.speed:
            i = min(i + 1, len(SPEEDS) - 1)
        self.set_speed(SPEEDS[i])
        return self.speed

    def slower(self) -> float:
        """Next speed step down (stays at the bottom step); returns the new speed."""
        if math.isinf(self.speed):
            self.set_speed(SPEEDS[-1])
            return self.speed
        i = _nearest_step(self.speed)
        if SPEEDS[i] >= self.speed:
            i = max(i - 1, 0)
        self.set_speed(SPEEDS[i])
        return self.speed

    def delay_until(self, t: float) -> float:
        """Wall seconds to wait before episode time reaches ``t`` (0 if it already has, inf when paused)."""
        if not self.playing:
            return float("inf")
        if math.isinf(self.speed):
            return 0.0
        wait = max(0.0, (t - self.episode_time()) / self.speed)
        if self.max_wait is not None:
            wait = min(wait, self.max_wait)
        return wait


def next_mark(marks: Iterable[int], current: int, forward: bool = True) -> int | None:
    """The first turn in ``marks`` after ``current`` (before it when not ``forward``), or None."""
    ordered = sorted(set(marks))
    if forward:
        i = bisect.bisect_right(ordered, current)
        return ordered[i] if i < len(ordered) else None
    i = bisect.bisect_left(ordered, current)
    return ordered[i - 1] if i > 0 else None


__all__ = ["MAX", "PAUSED", "PLAYING", "PRESETS", "Playback", "SPEEDS", "next_mark", "speed_label"]
