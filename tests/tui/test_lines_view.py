"""The turn summary drawn with the line API (widgets/lines_view.py): it wraps to the pane, scrolls, re-wraps on resize."""

from __future__ import annotations

from pathlib import Path

from stripebench_tui.core.events import ModelMessage
from stripebench_tui.tui.apps.replay_app import create_app
from stripebench_tui.tui.sources.episode_source import TraceSource
from tests.tui.conftest import SIZE, settle
from tests.tui.episode import checkout_events, write_trace

LONG = " ".join(f"word{i:03d}" for i in range(300))  # far more than 45% of the screen at any width


def _app(tmp_path: Path):
    events = checkout_events()
    for ev in events:
        if isinstance(ev, ModelMessage) and ev.turn == 3:
            ev.text = LONG
    return create_app(TraceSource(write_trace(tmp_path / "long.jsonl", events)), clock=lambda: 0.0, start_turn=3)


async def test_a_long_summary_wraps_to_the_pane_scrolls_and_rewraps_when_the_terminal_narrows(tmp_path: Path) -> None:
    app = _app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        summary = app.episode.detail.summary
        width = summary.scrollable_content_region.width
        lines = summary.text.splitlines()
        assert lines[1] == "assistant:" and lines[2].startswith("word000") and "word299" in summary.text
        assert max(len(line) for line in lines) <= width
        assert summary.outer_size.height <= SIZE[1] * 0.45 and summary.max_scroll_y > 0  # capped, and it scrolls
        summary.scroll_end(animate=False, immediate=True)
        await pilot.pause()
        assert "word299" in "\n".join(strip.text for strip in summary.render_lines(summary.size.region))
        before = len(lines)
        await pilot.resize_terminal(110, SIZE[1])
        await settle(pilot)
        narrower = summary.scrollable_content_region.width
        assert narrower < width
        lines = summary.text.splitlines()
        assert max(len(line) for line in lines) <= narrower and len(lines) > before
        # Moving to a short turn shrinks the pane to its content (auto height, as the Static it replaced).
        await pilot.press("right")
        await settle(pilot)
        assert app.episode.turn.index == 4
        assert summary.size.height == len(summary.text.splitlines())  # size: inside the border
