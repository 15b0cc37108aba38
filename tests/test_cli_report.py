"""`stripebench report` through the real CLI: writes once, refuses to overwrite, one line for a bad trace."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from stripebench_tui.errors import EXIT_BAD_FILE, EXIT_OK, EXIT_USAGE

REPLAYS = Path(__file__).resolve().parent.parent / "replays"
FAIL = REPLAYS / "checkout-migration-400"


def stripebench(*args: object, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "stripebench_tui", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=60)


def test_report_is_written_once_and_an_existing_file_is_refused(tmp_path: Path) -> None:
    r = stripebench("report", FAIL, cwd=tmp_path)
    assert r.returncode == EXIT_OK, r.stderr
    out = tmp_path / "checkout-migration-400.report.html"  # named after the episode directory
    assert out.read_text(encoding="utf-8").startswith("<!doctype html>")
    assert "wrote checkout-migration-400.report.html (12 turns" in r.stderr
    mine = tmp_path / "mine.html"
    mine.write_text("the user's own file", encoding="utf-8")
    r = stripebench("report", FAIL, "-o", mine)
    assert r.returncode == EXIT_USAGE
    assert r.stderr.strip() == f"stripebench: {mine}: already exists (use --force to overwrite)"
    assert mine.read_text(encoding="utf-8") == "the user's own file"
    r = stripebench("report", FAIL, "-o", mine, "--force", "--format", "md")
    assert r.returncode == EXIT_OK, r.stderr
    assert mine.read_text(encoding="utf-8").startswith("## Migrate a storefront")


def test_an_unreadable_trace_is_one_line_and_exit_3(tmp_path: Path) -> None:
    bad = tmp_path / "trace.jsonl"
    bad.write_text('{"type": "header", "schema": "stripebench.trace/1"}\n{"seq": 0, "t": 0, "turn": 0, "type": "nope"}\n'
                   '{"seq": 1, "t": 0, "turn": 1, "type": "model_message", "text": "x"}\n', encoding="utf-8")
    for target in (bad, tmp_path / "missing.jsonl"):
        r = stripebench("report", target, "-o", tmp_path / "r.html")
        assert r.returncode == EXIT_BAD_FILE, r.stderr
        assert r.stderr.count("\n") == 1 and r.stderr.startswith(f"stripebench: {target}"), r.stderr
        assert "Traceback" not in r.stderr
    assert not (tmp_path / "r.html").exists()  # nothing half-written


def test_markdown_to_stdout() -> None:
    r = stripebench("report", FAIL, "--format", "md", "-o", "-")
    assert r.returncode == EXIT_OK, r.stderr
    assert "#### turn 11 " in r.stdout and "| card element removed | pass |" in r.stdout
