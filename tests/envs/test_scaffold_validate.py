"""The one-command promise end to end: `stripebench envs new demo-task`, then `stripebench validate demo-task` passes
on what was generated (oracle 1.0, no-op 0, the mutant below 1.0), found through the variables the first printed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.drill
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_generated_environment_validates_as_generated(tmp_path: Path) -> None:
    made = subprocess.run([sys.executable, "-m", "stripebench_tui", "envs", "new", "demo-task", "--dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    next_line = made.stdout.splitlines()[-1]
    env = {**os.environ, "STRIPEBENCH_ENVIRONMENTS": str(tmp_path / "environments"),
           "STRIPEBENCH_GRADERS": str(tmp_path / "graders")}
    assert next_line == (f"next: STRIPEBENCH_ENVIRONMENTS={env['STRIPEBENCH_ENVIRONMENTS']} "
                         f"STRIPEBENCH_GRADERS={env['STRIPEBENCH_GRADERS']} stripebench validate demo-task")
    result = subprocess.run([sys.executable, "-m", "stripebench_tui", "validate", "demo-task"], env=env,
                            capture_output=True, text=True, timeout=540)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "valid: every run scored as expected" in result.stdout
    progress = result.stderr
    assert "demo-task: oracle → 1.00" in progress and "demo-task: no-op → 0.00" in progress
    assert "demo-task: mutant no-member-number → 0.67" in progress  # the member-number criterion fails
