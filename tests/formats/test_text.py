"""Headless rendering: untrusted text is shown as text, without control sequences."""

from __future__ import annotations

import io
from pathlib import Path

from stripebench_tui.core.events import EpisodeEnd, GraderVerdict, ModelMessage, ToolCall, ToolResult
from stripebench_tui.core.trace import TraceWriter, open_trace
from stripebench_tui.formats.text import OUTPUT_LINES, episode_passed, sanitize, write_headless, write_summary
from tests.core.episodes import header


def test_sanitize_strips_escape_sequences_and_controls_but_keeps_layout() -> None:
    # The headless printer's sanitiser is the shared one (tests/core/test_sanitize.py has the cases).
    nasty = "a\x1b[31mred\x1b[0m\tb\r\nc\x1b]0;title\x07d\x08e\x00f\x9bgh"
    assert sanitize(nasty) == "ared    b\ncdefh"  # (\x9bg is a whole C1 CSI sequence)


def test_headless_prints_markup_as_text_and_caps_long_outputs(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with TraceWriter(path, header()) as w:
        w.write(ModelMessage(t=1, turn=1, text="[bold red]not markup[/] \x1b[2J"))
        w.write(ToolCall(t=2, turn=1, call_id="c", tool="shell", arguments={"command": "seq 1000"}))
        w.write(ToolResult(t=3, turn=1, call_id="c", tool="shell", output="\n".join(str(i) for i in range(1000)), exit_code=0))
        w.write(GraderVerdict(t=4, turn=1, criterion="paid", status="fail"))
        w.write(EpisodeEnd(t=5, turn=1, reason="agent_done", score=0.0, passed=False))
    out = io.StringIO()
    state = write_headless(open_trace(path), out)
    text = out.getvalue()
    assert "[bold red]not markup[/]" in text and "\x1b" not in text
    assert f"{OUTPUT_LINES - 1}\n" in text and "\n    │ 999\n" not in text and "more lines" in text
    assert "✗ verdict paid: fail" in text and "Final score: 0.00 · FAILED" in text
    assert not episode_passed(state)
    summary = io.StringIO()
    write_summary(state, summary)
    assert "Verdict timeline" in summary.getvalue() and "1: fail" in summary.getvalue()


def test_passed_needs_an_end_and_an_explicit_pass_or_every_criterion_passing() -> None:
    from stripebench_tui.core.state import reduce

    def end(seq: int, passed=None) -> EpisodeEnd:
        return EpisodeEnd(seq=seq, turn=1, passed=passed)

    a_pass = GraderVerdict(turn=1, criterion="a", status="pass")
    assert not episode_passed(reduce([]))
    assert not episode_passed(reduce([end(0)]))  # unscored
    assert not episode_passed(reduce([a_pass]))  # never finished
    assert episode_passed(reduce([a_pass, end(1)]))
    assert not episode_passed(reduce([a_pass, GraderVerdict(seq=1, turn=1, criterion="b", status="pending"), end(2)]))
    assert not episode_passed(reduce([a_pass, end(1, passed=False)]))
    assert episode_passed(reduce([end(0, passed=True)]))
