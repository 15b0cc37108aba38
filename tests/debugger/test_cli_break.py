"""`--break` on the command line: a bad expression is one line and exit 2; a replay lists its hits."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

MUTANT = Path(__file__).resolve().parents[2] / "replays" / "checkout-migration-400"


def _cli(*args):
    env = {**os.environ, "COLUMNS": "200"}  # help tables at full width
    return subprocess.run([sys.executable, "-m", "stripebench_tui", *map(str, args)], capture_output=True, text=True,
                          timeout=60, env=env)


def test_break_on_the_command_line():
    bad = _cli("run", "checkout-migration", "--headless", "--break", "request PUTS /v1/x")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--break: breakpoint" in bad.stderr
    hits = _cli("replay", MUTANT, "--headless", "--break", "tool replace_in_file", "--break", "verdict fail paid")
    assert hits.returncode == 1  # the episode failed; the hits are listed after it
    tail = hits.stdout.split("Breakpoint hits:")[1]
    assert [line.split(":")[0].strip() for line in tail.strip().splitlines()] == ["turn 5", "turn 6", "turn 11"]
    assert "verdict paid: pending → fail" in tail
    summary = _cli("replay", MUTANT, "--summary", "--break", "tokens>=1")
    assert "Where the time went" in summary.stdout and "no breakpoint matched" in summary.stdout  # the oracle uses no tokens
    assert "tool shell command=*curl*" in _cli("run", "--help").stdout  # the globs survive the help's markdown
