"""``stripebench replay``'s entry into the TUI."""

from __future__ import annotations

from typing import Any

from stripebench_tui.tui.app import create_app
from stripebench_tui.tui.source import TraceSource


def run_replay(trace: Any, *, speed: float = 1.0, autoplay: bool = False, breakpoints: list[str] | None = None,
               present: bool = False) -> None:
    """Open the replay TUI on an opened trace (``formats.open.open_episode``) and run until the user quits."""
    create_app(TraceSource(trace), speed=speed, autoplay=autoplay, breakpoints=breakpoints, present=present).run()
