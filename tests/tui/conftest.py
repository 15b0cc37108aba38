"""Fixtures for the TUI tests: a written checkout trace and an app factory with a fixed clock."""

from __future__ import annotations

from pathlib import Path

import pytest

from stripebench_tui.tui.apps.replay_app import EpisodeApp, create_app
from stripebench_tui.tui.sources.episode_source import TraceSource
from tests.tui.episode import write_trace

SIZE = (160, 45)


@pytest.fixture
def trace(tmp_path: Path):
    return write_trace(tmp_path / "checkout.jsonl")


@pytest.fixture
def make_app(trace):
    def factory(**kwargs) -> EpisodeApp:
        kwargs.setdefault("clock", lambda: 0.0)
        return create_app(TraceSource(trace), **kwargs)

    return factory


async def settle(pilot) -> None:
    """Let workers (index, search, verdict scan) finish and the screen catch up."""
    app = pilot.app
    for _ in range(3):
        await app.workers.wait_for_complete()
        await pilot.pause()


def widget_text(widget) -> str:
    """The text a widget draws, line by line (as a user would read it)."""
    from textual.geometry import Region

    lines = widget.render_lines(Region(0, 0, widget.size.width, widget.size.height))
    return "\n".join(line.text.rstrip() for line in lines)
