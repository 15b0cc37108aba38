"""Hostile terminal output (escape sequences, C1 controls, OSC 8/52, DCS, overwrites, bells, a 1 MB line)
goes through the headless printer and the TUI without reaching the terminal or moving anything on screen."""

from __future__ import annotations

import dataclasses
import io
import re
from pathlib import Path

from stripebench_tui.core.events import ModelMessage, Service, ToolCall, ToolResult
from stripebench_tui.core.sanitize import CARRIAGE_RETURN
from stripebench_tui.runtime.printer import LivePrinter
from stripebench_tui.tui.apps.replay_app import create_app
from stripebench_tui.tui.sources.episode_source import TraceSource
from stripebench_tui.tui.widgets.status_bar import StatusBar
from tests.tui.conftest import SIZE, settle, widget_text
from tests.tui.episode import checkout_events, write_trace

ESC = "\x1b"
HOSTILE = (
    f"{ESC}[2J{ESC}[H{ESC}[999;1HFAKE STATUS: score 1.00 PASSED{ESC}[?25l{ESC}[?1049l"
    f"\x9b2J\x9b1;1H"
    f"{ESC}]8;;https://evil.example/{ESC}\\click me{ESC}]8;;{ESC}\\"
    f"{ESC}]52;c;cm0gLXJmIH4=\x07"
    f"{ESC}]0;pwned-title\x07"
    f"{ESC}P1$qpwned-dcs{ESC}\\\x90pwned-c1-dcs\x9c"
    "hidden\rshown\x07\x07\x08"
    f"{ESC}c{ESC}#8"
)
HUGE_LINE = "B" * 1_000_000
# What must never reach the terminal: any C0 control but newline, ESC, DEL, C1 controls.
CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def payloads_outside_json(text: str) -> list[str]:
    """Lines showing a sequence's payload other than as the inert JSON escapes of the tool call's arguments."""
    return [line for line in text.splitlines()
            if any(p in line for p in ("pwned", "evil.example", "cm0gLXJmIH4=")) and "\\u001b" not in line]


def hostile_events() -> list:
    """The checkout episode with hostile text in every untrusted field of turn 1, and a 1 MB output line."""
    out = []
    for ev in checkout_events():
        if ev.turn == 1 and isinstance(ev, ModelMessage):
            ev = dataclasses.replace(ev, text=ev.text + HOSTILE, reasoning=HOSTILE)
        elif ev.turn == 1 and isinstance(ev, ToolCall):
            ev = dataclasses.replace(ev, arguments={"command": "cat app/checkout.py" + HOSTILE})
        elif ev.turn == 1 and isinstance(ev, ToolResult):
            ev = dataclasses.replace(ev, output=HOSTILE + "\n" + HUGE_LINE + HOSTILE + "\n" + ev.output)
        out.append(ev)
    return out


def test_the_printer_lets_no_control_byte_through() -> None:
    buf = io.StringIO()
    printer = LivePrinter(buf)
    for ev in hostile_events() + [Service(t=1.5, turn=1, service="app", status="log", text=HOSTILE)]:
        printer(ev)
    out = buf.getvalue()
    assert CONTROL.findall(out) == []
    assert "FAKE STATUS" in out and f"hidden{CARRIAGE_RETURN}shown" in out  # the text stays, neutralised
    assert payloads_outside_json(out) == []
    assert '"command": "cat app/checkout.py\\u001b[2J' in out  # the arguments are shown as JSON, escapes as text
    assert max(len(line) for line in out.splitlines()) < 5000  # the 1 MB line is cut


async def _screen(trace_path: Path, events: list) -> dict:
    trace = write_trace(trace_path, events)
    app = create_app(TraceSource(trace), clock=lambda: 0.0, start_turn=1)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.episode
        seen = {
            "status": widget_text(screen.query_one(StatusBar)),
            "regions": {w.id: w.region for w in screen.query("#panes, #timeline, #detail, #side, #objects, #verdicts, "
                                                             "#search, #status")},
            "svg": app.export_screenshot(),
            "output": screen.detail.output.visible_text(),
            "detail": widget_text(screen.detail),
            "title": app.title,
        }
        await pilot.press("q")
    return seen


async def test_the_tui_is_neither_spoofed_nor_broken_by_hostile_output(tmp_path: Path) -> None:
    benign = await _screen(tmp_path / "benign.jsonl", checkout_events())
    hostile = await _screen(tmp_path / "hostile.jsonl", hostile_events())
    # Same status bar, same title, same layout as the benign episode.
    assert hostile["status"] == benign["status"] and "FAKE" not in hostile["status"]
    assert hostile["title"] == benign["title"]
    assert hostile["regions"] == benign["regions"]
    # Nothing that reaches the terminal carries a control character or the sequences' payloads.
    for what in ("svg", "output", "detail"):
        assert CONTROL.findall(hostile[what]) == [], what
        assert not re.search(r"&#(?:x0*1b|0*27);", hostile[what], re.IGNORECASE), what
        assert payloads_outside_json(hostile[what]) == [], what
    # The text itself is shown: the overwrite made visible, the 1 MB line cut with a marker.
    assert f"hidden{CARRIAGE_RETURN}shown" in hostile["output"] and "click me" in hostile["output"]
    huge = next(line for line in hostile["output"].split("\n") if line.startswith("BBBB"))
    assert len(huge) < 5000 and re.search(r"\[\d+ more characters on this line\]$", huge)
