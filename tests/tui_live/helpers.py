"""Helpers for driving the live app with Pilot."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stripebench_tui.runtime.episode import EpisodeConfig

SIZE = (160, 48)


def config(tmp_path: Path, name: str = "ep", **kwargs: Any) -> EpisodeConfig:
    kwargs.setdefault("agent", "oracle")
    return EpisodeConfig(env="tiny-shop", episode_dir=tmp_path / name, headless=False, **kwargs)


async def wait_for(pilot: Any, cond: Callable[[], bool], timeout: float = 30.0, what: str = "condition") -> None:
    """Let the app run until ``cond()`` holds (AssertionError after ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.05)


def trace_events(path: Path) -> list[dict]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            pass
    return out
