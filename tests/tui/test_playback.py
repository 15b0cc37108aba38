"""The pacing of replays, tested with a fake clock and no event loop."""

from __future__ import annotations

import math

import pytest

from stripebench_tui.core.playback import SPEEDS, Playback


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_paused_playback_never_fires() -> None:
    p = Playback(clock=FakeClock())
    assert p.delay_until(5.0) == math.inf
    assert p.state == "paused"


def test_delay_follows_recorded_time_scaled_by_speed() -> None:
    clock = FakeClock()
    p = Playback(clock=clock, speed=2.0)
    p.play(10.0)
    assert p.delay_until(14.0) == pytest.approx(2.0)
    clock.now += 1.5
    assert p.episode_time() == pytest.approx(13.0)
    assert p.delay_until(14.0) == pytest.approx(0.5)
    clock.now += 10
    assert p.delay_until(14.0) == 0.0


def test_pause_freezes_episode_time_and_play_resumes_from_it() -> None:
    clock = FakeClock()
    p = Playback(clock=clock)
    p.play(0.0)
    clock.now += 3
    p.pause()
    clock.now += 50
    assert p.episode_time() == pytest.approx(3.0)
    p.toggle()
    clock.now += 1
    assert p.episode_time() == pytest.approx(4.0)


def test_speed_change_keeps_time_already_played() -> None:
    clock = FakeClock()
    p = Playback(clock=clock, speed=1.0)
    p.play(0.0)
    clock.now += 2
    assert p.faster() == 2.0
    clock.now += 2
    assert p.episode_time() == pytest.approx(6.0)
    assert p.slower() == 1.0
    assert p.slower() == 0.5


def test_speed_steps_stop_at_the_ends_and_snap_odd_speeds() -> None:
    p = Playback(clock=FakeClock(), speed=SPEEDS[-1])
    assert p.faster() == SPEEDS[-1]
    p.set_speed(SPEEDS[0])
    assert p.slower() == SPEEDS[0]
    p.set_speed(3.0)
    assert p.faster() == 4.0
    p.set_speed(3.0)
    assert p.slower() == 2.0


def test_max_wait_caps_long_gaps() -> None:
    p = Playback(clock=FakeClock(), max_wait=1.0)
    p.play(0.0)
    assert p.delay_until(600.0) == 1.0


def test_bad_speed_is_refused() -> None:
    with pytest.raises(ValueError):
        Playback(clock=FakeClock(), speed=0)
    with pytest.raises(ValueError):
        Playback(clock=FakeClock()).set_speed(-1)
