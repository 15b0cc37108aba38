"""Hostile text printed by the other commands (issue 40, item 3): an error naming a file, a benchmark folder's
listing and an episode's Markdown report obey no escape of the text they quote."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.batch.hostile import ESCAPES, hostile, hostile_trace, terminal_controls

REPO = Path(__file__).resolve().parent.parent


def stripebench(*args: object, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "stripebench_tui", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=120, env=env, stdin=subprocess.DEVNULL)


def test_an_error_quoting_a_hostile_file_name_is_printed_without_its_escapes(tmp_path: Path) -> None:
    name = tmp_path / f"trace{ESCAPES}.jsonl"
    name.write_text('{"type": "header", "schema": "nope"}\n')
    r = stripebench("replay", name, "--summary")
    assert r.returncode == 3 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert terminal_controls(r.stderr) == []


def test_a_benchmark_folders_listing_prints_no_escape_of_its_names(tmp_path: Path) -> None:
    folder = tmp_path / f"evil{ESCAPES}"
    (folder / "environment").mkdir(parents=True)
    (folder / "environment" / "PROBLEM.md").write_text(f"# {hostile(0, 'title')}\n\nDo it.\n")
    (folder / "grader").mkdir()
    r = stripebench("envs", "--path", tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "title" in r.stdout and terminal_controls(r.stdout) == [], r.stdout


def test_an_episodes_markdown_report_renders_no_html_and_prints_no_escape(tmp_path: Path) -> None:
    from markdown_it import MarkdownIt

    from tests.batch.test_hostile_sweep import elements

    episode = tmp_path / "ep"
    hostile_trace("checkout-migration-400", episode, hostile(0, "env"), hostile(1, "agent"))
    r = stripebench("report", episode, "--format", "md", "-o", "-")
    assert r.returncode == 0, r.stderr[-2000:]
    assert "agent" in r.stdout and terminal_controls(r.stdout) == []
    found = elements(MarkdownIt("commonmark", {"html": True}).enable("table").render(r.stdout))
    assert {"script", "img"} & set(found.tags) == set() and "onerror" not in found.attributes
