"""`stripebench export --format cast`: the real TUI filmed under a pty, read back by asciinema's parser and pyte.

The recordings run the presenter at a high speed so that each takes a few seconds; what is checked is what a viewer
would see (pyte's screen after each event), not the bytes.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from stripebench_tui.core.redact import Redactor
from stripebench_tui.errors import EXIT_USAGE, UserError
from stripebench_tui.formats.cast import parse_size, redact_drawn
from tests.formats.cast_screens import all_text, frames, read_cast
from tests.formats.report_fixtures import SECRETS, write_raw_trace

REPLAYS = Path(__file__).resolve().parents[2] / "replays"
SAMPLE = REPLAYS / "checkout-migration-400"
FINDING = "Finding: agent says the work is done after POST"


def stripebench(*args: object, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "stripebench_tui", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=180)


def turn_on(lines: list[str]) -> int | None:
    """The turn the presenter shows: its status line and its "Now" pane agree (a frame read half-drawn has not)."""
    status = re.search(r"turn (\d+)/\d+", lines[-1])
    now = re.search(r"Turn (\d+) ·", "\n".join(lines))
    return int(status.group(1)) if status and now and status.group(1) == now.group(1) else None


@pytest.fixture(scope="module")
def sample_cast(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cast") / "sample.cast"
    done = stripebench("export", SAMPLE, "--format", "cast", "--speed", "6", "--size", "120x36", "-o", out)
    assert done.returncode == 0, done.stderr
    assert "wrote" in done.stderr and "events" in done.stderr
    return out


def test_the_sample_records_to_a_cast_asciinema_reads(sample_cast: Path) -> None:
    header, events = read_cast(sample_cast)
    assert (header["version"], header["width"], header["height"]) == (2, 120, 36)
    assert header["title"] == "checkout-migration-400 · checkout-migration · oracle"
    assert header["env"]["STRIPEBENCH_ENV"] == "checkout-migration" and header["env"]["STRIPEBENCH_AGENT"] == "oracle"
    assert header["env"]["TERM"] == "xterm-256color"
    assert isinstance(header["timestamp"], int)
    times = [e[0] for e in events]
    assert len(events) > 10 and {e[1] for e in events} == {"o", "m"}
    assert times == sorted(times)
    markers = [e[2] for e in events if e[1] == "m"]
    assert markers == [f"turn {n}" for n in range(12)]
    gaps = [b - a for a, b in zip([0.0, *times], times, strict=False)]
    assert max(gaps) <= 2.0 + 1e-6  # --idle-limit's default holds, start-up included


def test_the_finding_is_on_screen_at_the_turn_it_fires_and_not_before(sample_cast: Path) -> None:
    seen: dict[int, bool] = {}
    for frame in frames(sample_cast):
        turn = turn_on(frame.lines)
        if turn is not None:
            seen[turn] = seen.get(turn, False) or FINDING in " ".join(frame.lines[:6])
    assert sorted(seen) == list(range(12))  # every turn was shown, in a recording that ended by itself
    assert seen[11] is True
    assert not any(seen[t] for t in range(11))


def test_seeking_to_a_turns_marker_shows_that_turn(sample_cast: Path) -> None:
    _, events = read_cast(sample_cast)
    at = {e[2]: e[0] for e in events if e[1] == "m"}
    shown_at: dict[float, int | None] = {}
    for frame in frames(sample_cast):  # the screen a player shows at time t is the last frame with time <= t
        shown_at[frame.t] = turn_on(frame.lines)
    for turn in (5, 10, 11):
        t = at[f"turn {turn}"]
        assert shown_at[max(x for x in shown_at if x <= t)] == turn


def test_the_recording_ends_on_the_last_frame_not_a_blank_terminal(sample_cast: Path) -> None:
    last = list(frames(sample_cast))[-1]
    assert turn_on(last.lines) == 11
    assert "Verdicts" in last.text and "card element removed" in last.text and "score 0.08" in last.text
    assert not last.lines[0].strip().startswith("u")  # no keyboard-protocol residue drawn by a plain terminal


def test_until_and_turn_range_choose_the_turns(tmp_path: Path) -> None:
    out = tmp_path / "part.cast"
    done = stripebench("export", SAMPLE, "--format", "cast", "--speed", "5", "--from-turn", "9", "--until", "finding",
                       "-o", out)
    assert done.returncode == 0, done.stderr
    assert "until turn 11" in done.stderr
    turns = {turn_on(f.lines) for f in frames(out)} - {None}
    assert turns == {9, 10, 11}


def test_bad_input_is_one_line_and_an_existing_file_is_kept(tmp_path: Path) -> None:
    out = tmp_path / "x.cast"
    out.write_text("mine")
    for args, says in ((("-o", out), "already exists"), (("--size", "10", "-o", tmp_path / "y.cast"), "--size"),
                       (("--until", "bogus", "-o", tmp_path / "y.cast"), "--until"),
                       (("--from-turn", "50", "-o", tmp_path / "y.cast"), "no turn"),
                       (("-o", "-"), "-o FILE")):
        done = stripebench("export", SAMPLE, "--format", "cast", *args)
        assert done.returncode == EXIT_USAGE, (args, done.stderr)
        assert says in done.stderr and "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert out.read_text() == "mine" and not (tmp_path / "y.cast").exists()


def test_parse_size() -> None:
    assert parse_size("160x45") == (160, 45) and parse_size(" 100 X 30 ") == (100, 30)
    for bad in ("", "160", "x45", "20x10", "160x45x2"):
        with pytest.raises(UserError):
            parse_size(bad)


def test_redaction_of_drawn_text_leaves_escape_sequences_alone() -> None:
    key = "sk_test_" + "Z" * 24
    drawn = f"\x1b[1;38;2;255;255;255mkey {key}\x1b[0m\x1b[3;1Hplain\x1b]8;;http://x\x07link"
    clean, changed = redact_drawn(drawn, Redactor())
    assert key not in clean and "sk_test_[REDACTED]" in clean and changed == 1
    assert clean.count("\x1b") == drawn.count("\x1b") and "\x1b[3;1H" in clean and "\x1b]8;;http://x\x07" in clean
    assert redact_drawn("\x1b[2Jnothing secret", Redactor()) == ("\x1b[2Jnothing secret", 0)


# ----- masking and hostile text ---------------------------------------------------------------------------------
ANSI = "\x1b[2J\x1b[31mRED\x1b[0m\x1b]52;c;c2VjcmV0\x07\x1b]0;pwned-title\x07"
MARKUP = "[bold red]MARKUP-LITERAL[/bold red] [link=http://evil.test]click[/link]"
HTML = "<b>HTML-LITERAL</b><script>alert(1)</script>"


def write_hostile_trace(directory: Path) -> Path:
    """A 3-turn trace whose model text and tool output carry escapes, Rich markup, HTML, secrets and an email."""
    directory.mkdir(parents=True, exist_ok=True)
    sk, ant, whsec, password = SECRETS
    events = [
        {"type": "header", "schema": "stripebench.trace/1", "env": "checkout-migration", "agent": "anthropic",
         "model": "claude-test", "started": "2026-12-01T10:00:00Z"},
        {"seq": 0, "t": 0.1, "turn": 0, "type": "grader_verdict", "criterion": "paid", "status": "pending"},
        {"seq": 1, "t": 1.0, "turn": 1, "type": "model_message", "role": "assistant",
         "text": f"{MARKUP} {ANSI} key {sk} mail jane.doe@example.com"},
        {"seq": 2, "t": 1.1, "turn": 1, "type": "tool_call", "call_id": "c1", "tool": "shell",
         "arguments": {"command": f"curl -H 'Authorization: Bearer {sk}' {HTML}"}},
        {"seq": 3, "t": 2.0, "turn": 1, "type": "tool_result", "call_id": "c1", "tool": "shell",
         "output": f"{HTML} {ANSI}\nSTRIPE_PASSWORD={password} {whsec} {ant}", "exit_code": 0, "duration": 0.9},
        {"seq": 4, "t": 3.0, "turn": 2, "type": "stripe_object", "object_id": "cus_1", "object_type": "customer",
         "data": {"id": "cus_1", "object": "customer", "email": "jane.doe@example.com", "status": sk}},
        {"seq": 5, "t": 3.1, "turn": 2, "type": "grader_verdict", "criterion": f"paid {MARKUP}", "status": "fail"},
        {"seq": 6, "t": 3.2, "turn": 2, "type": "model_message", "role": "assistant", "text": f"Done. {whsec}"},
        {"seq": 7, "t": 3.3, "turn": 2, "type": "episode_end", "reason": "agent_done", "score": 0.0, "passed": False},
    ]
    path = directory / "trace.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return path


@pytest.mark.parametrize("make", [write_raw_trace, write_hostile_trace], ids=["report-fixture", "hostile"])
def test_planted_secrets_never_reach_the_cast(tmp_path: Path, make: object) -> None:
    trace = make(tmp_path / "episode")  # type: ignore[operator]
    out = tmp_path / "e.cast"
    done = stripebench("export", trace, "--format", "cast", "--speed", "20", "--size", "160x45", "-o", out)
    assert done.returncode == 0, done.stderr
    text = out.read_text(encoding="utf-8")  # header, title and every event
    for secret in SECRETS:
        assert secret not in text
        kept = Redactor().text(secret).removesuffix("[REDACTED]")  # the redactor keeps a key's kind ("sk_test_")
        body = secret[len(kept):] if kept != secret else secret
        assert body[:8] not in text  # not even a cut-off head of the secret part
    assert "jane.doe@example.com" not in text
    shown = "\n".join(f.text for f in frames(out))
    assert "[REDACTED]" in shown  # the secrets were there to mask, and were drawn masked


def test_a_hostile_trace_is_drawn_as_text(tmp_path: Path) -> None:
    trace = write_hostile_trace(tmp_path / "episode")
    out = tmp_path / "h.cast"
    done = stripebench("export", trace, "--format", "cast", "--speed", "20", "-o", out)
    assert done.returncode == 0, done.stderr
    raw = all_text(out)
    # The trace's own escape sequences never reach the terminal: no clipboard write, no title, no clear screen.
    assert "\x1b]52" not in raw and "pwned-title" not in raw and "\x1b]0;" not in raw
    shown = "\n".join(f.text for f in frames(out))
    assert "[bold red]MARKUP-LITERAL[/bold red]" in shown  # Rich markup shown as typed, not obeyed
    assert "<b>HTML-LITERAL</b>" in shown
    assert "RED" in shown and "\x1b" not in shown


def test_the_title_and_header_variables_are_masked() -> None:
    from stripebench_tui.core.trace import Header
    from stripebench_tui.formats.cast import cast_env, cast_title

    header = Header(env="checkout-migration", agent="anthropic", model=f"model {SECRETS[0]}")
    title = cast_title("jane.doe@example.com", header)
    assert SECRETS[0] not in title and "jane.doe" not in title and "j•••@example.com" in title
    env = cast_env(f"ep {SECRETS[2]}", header)
    assert SECRETS[2] not in env["STRIPEBENCH_EPISODE"] and env["STRIPEBENCH_AGENT"] == "anthropic"
