"""The batch tests' shared local batch: 3 environments × 2 agents × 2 runs, its runner killed with -9 and resumed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.batch.helpers import AGENTS, ENVS, batch_env, ended_lines, make_envs, stripebench

KILL_AFTER = 4  # episodes ended before the runner is killed


@pytest.fixture(scope="session")
def batch_envs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_envs(tmp_path_factory.mktemp("batch-envs"))


@pytest.fixture(scope="session")
def local_batch(batch_envs: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Run the batch on 2 workers, kill -9 the runner once 4 episodes ended, then --resume it to the end."""
    out = tmp_path_factory.mktemp("local") / "batch"
    env = batch_env(batch_envs)
    proc = subprocess.Popen([sys.executable, "-m", "stripebench_tui", "batch", *ENVS, "--agents", AGENTS, "--runs", "2",
                             "--workers", "2", "--seed", "7", "--out", str(out)], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    seen: list[str] = []
    assert proc.stdout is not None
    for line in proc.stdout:  # the runner says each episode's end as it happens
        seen += ended_lines(line)
        if len(seen) >= KILL_AFTER:
            os.kill(proc.pid, signal.SIGKILL)
            break
    proc.wait(timeout=60)
    assert len(seen) >= KILL_AFTER, proc.stderr.read() if proc.stderr else ""
    before = {p.parent.name: json.loads(p.read_text()) for p in out.glob("*/result.json")}
    resumed = stripebench("batch", "--resume", str(out), env=env)
    return {"dir": out, "env": env, "before": before, "resumed": resumed}
