"""The report reads an episode's files only inside its directory, and cuts any long text with a note saying so.

Found by a probe: a screenshot ``leak.png`` that was a link to /etc/passwd went base64 into the HTML report, and a
200 MB model message went whole into it (a 209 MB file, 1.5 GB of memory to build).
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stripebench_tui.core.annotations import Annotations
from stripebench_tui.formats.episode_report import TEXT_CHARS, build_report
from stripebench_tui.formats.open import open_episode
from stripebench_tui.formats.report_html import render_report
from tests.formats.report_fixtures import PNG_1x1

SECRET = "root:x:0:0:the reader's own secret"
OUTSIDE = "refused, it points outside the episode directory"


def write_trace(episode: Path, *events: dict) -> Path:
    episode.mkdir(parents=True, exist_ok=True)
    lines = [{"type": "header", "schema": "stripebench.trace/1", "env": "checkout-migration", "agent": "anthropic"}]
    lines += [{"seq": i, "t": float(i), "turn": 1, **ev} for i, ev in enumerate(events)]
    path = episode / "trace.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in lines), encoding="utf-8")
    return path


def screenshot_result(*names: str) -> dict:
    return {"type": "tool_result", "call_id": "c1", "tool": "browser_screenshot", "output": "saved",
            "images": list(names)}


@pytest.fixture
def secret_png(tmp_path: Path) -> Path:
    """A file of the reader's, outside the episode, with an image's name (so only the refusal keeps it out)."""
    path = tmp_path / "home" / "secret.png"
    path.parent.mkdir()
    path.write_bytes(SECRET.encode())
    return path


def both(trace: Path) -> tuple[str, str]:
    """(HTML, Markdown) reports of ``trace``, built as ``stripebench report`` builds each."""
    html = render_report(build_report(open_episode(trace)), "html")
    md = render_report(build_report(open_episode(trace), embed_images=False), "md")
    return html, md


def assert_not_leaked(text: str) -> None:
    assert SECRET not in text and base64.b64encode(SECRET.encode()).decode() not in text


def test_a_screenshot_linked_outside_is_named_as_refused_not_embedded(tmp_path: Path, secret_png: Path) -> None:
    ep = tmp_path / "ep"
    trace = write_trace(ep, screenshot_result("leak.png", "ok.png"))
    (ep / "leak.png").symlink_to(secret_png)
    (ep / "ok.png").write_bytes(PNG_1x1)
    html, md = both(trace)
    for text in (html, md):
        assert_not_leaked(text)
    assert f"screenshot leak.png: {OUTSIDE}" in html
    assert f"screenshot leak.png: {OUTSIDE}" in md
    assert 'src="data:image/png;base64,' + base64.b64encode(PNG_1x1).decode() in html  # the honest one still shows
    assert "screenshot: ok.png (in the HTML report)" in md


def test_a_screenshot_under_a_directory_linked_outside_is_refused(tmp_path: Path, secret_png: Path) -> None:
    ep = tmp_path / "ep"
    trace = write_trace(ep, screenshot_result("screenshots/secret.png"))
    (ep / "screenshots").symlink_to(secret_png.parent, target_is_directory=True)
    html, md = both(trace)
    for text in (html, md):
        assert_not_leaked(text)
        assert f"screenshot screenshots/secret.png: {OUTSIDE}" in text


def test_dot_dot_and_absolute_screenshot_names_are_refused(tmp_path: Path, secret_png: Path) -> None:
    ep = tmp_path / "ep"
    trace = write_trace(ep, screenshot_result("../home/secret.png", str(secret_png)))
    html, md = both(trace)
    for text in (html, md.replace("\\", "")):  # (Markdown escapes the names' underscores)
        assert_not_leaked(text)
        assert f"screenshot ../home/secret.png: {OUTSIDE}" in text
        assert f"screenshot {secret_png}: {OUTSIDE}" in text


@pytest.mark.timeout(20)
def test_a_fifo_named_like_a_screenshot_does_not_hang_the_report(tmp_path: Path) -> None:
    ep = tmp_path / "ep"
    trace = write_trace(ep, screenshot_result("hang.png"))
    os.mkfifo(ep / "hang.png")
    html, md = both(trace)
    for text in (html, md):
        assert "screenshot hang.png: refused, it is not a regular file (a FIFO)" in text


def test_a_notes_file_linked_outside_is_a_visible_note_and_the_report_is_still_built(tmp_path: Path) -> None:
    ep = tmp_path / "ep"
    trace = write_trace(ep, {"type": "model_message", "role": "assistant", "text": "hello"})
    other = tmp_path / "other" / "trace.jsonl"
    other.parent.mkdir()
    Annotations(other).add(1, SECRET)  # a well-formed notes file: only the refusal keeps it out
    (ep / "trace.jsonl.notes.json").symlink_to(other.with_name("trace.jsonl.notes.json"))
    html, md = both(trace)
    for text in (html, md):
        assert SECRET not in text and "hello" in text
        assert f"notes not shown: {ep / 'trace.jsonl.notes.json'}: {OUTSIDE}" in text.replace("\\", "")


def test_long_texts_are_cut_with_a_note_of_what_was_left_out(tmp_path: Path) -> None:
    extra = 150_000
    key = "sk_test_51Hstraddlingthecut0123456789"
    # A key across the cut, 4 characters of it before: too few for the redactor to know it as a key, had the cut
    # been made before cleaning. The text is cleaned a margin past the cut, so what is kept is the redacted form.
    message = "m" * (TEXT_CHARS - 13) + f" {key} " + "z" * (extra - len(key) + 11)
    reasoning = "r" * (TEXT_CHARS + 5)
    arguments = {"path": "a.txt", "content": "c" * 300_000}
    one_line = "o" * 1_000_000
    trace = write_trace(
        tmp_path / "ep",
        {"type": "model_message", "role": "assistant", "text": message, "reasoning": reasoning},
        {"type": "tool_call", "call_id": "c1", "tool": "write_file", "arguments": arguments},
        {"type": "tool_result", "call_id": "c1", "tool": "write_file", "output": one_line},
    )
    html, md = both(trace)
    for text in (html, md.replace("\\", "")):  # (Markdown escapes underscores)
        assert len(text) < 400_000  # 1.6 MB of text in the trace
        assert "sk_test_51H" not in text and "m sk_test_[RED" in text
        more = len(message) - TEXT_CHARS
        assert f"… {more:,} more characters not shown; the whole text is in trace.jsonl, event seq 0" in text
        assert "more characters not shown; the whole text is in trace.jsonl, event seq 1" in text  # the arguments
        assert f"[{len(one_line) - 300} more characters on this line]" in text  # the one-line output
        assert "m" * 1000 in text  # the head of each text is there
    assert "… 5 more characters not shown; the whole text is in trace.jsonl, event seq 0" in html  # the reasoning


def test_report_command_on_a_crafted_folder_writes_the_notes_and_no_traceback(tmp_path: Path, secret_png: Path) -> None:
    ep = tmp_path / "ep"
    write_trace(ep, screenshot_result("leak.png"))
    (ep / "leak.png").symlink_to(secret_png)
    for fmt in ("html", "md"):
        out = tmp_path / f"r.{fmt}"
        r = subprocess.run([sys.executable, "-m", "stripebench_tui", "report", ep, "-f", fmt, "-o", out],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
        text = out.read_text(encoding="utf-8")
        assert_not_leaked(text)
        assert f"screenshot leak.png: {OUTSIDE}" in text
