"""Shared by the batch tests: three copies of the tiny-shop fixture environment and a batch run as a process."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.fixture_envs import FIXTURES

ENVS = ("tiny-a", "tiny-b", "tiny-c")
AGENTS = "oracle,mutant:no-metadata"
REPO = Path(__file__).resolve().parents[2]


SEED = '[stripe]\nseed = "seed.py"\n'


def make_envs(root: Path) -> Path:
    """``root`` with tiny-shop copied under three ids (the fast fixture environment, three tasks).

    The copies leave out tiny-shop's seed script (a product and price no criterion looks at): one Python process
    with the Stripe SDK less per episode, about a third of an episode's start-up.
    """
    for env_id in ENVS:
        target = root / env_id
        shutil.copytree(FIXTURES / "tiny-shop", target, ignore=shutil.ignore_patterns("__pycache__", "seed.py"))
        manifest = target / "environment.toml"
        text = manifest.read_text()
        assert SEED in text, "tiny-shop's manifest changed: update tests/batch/helpers.py"
        manifest.write_text(text.replace('id = "tiny-shop"', f'id = "{env_id}"').replace(SEED, ""))
    return root


def batch_env(envs: Path) -> dict[str, str]:
    """The variables a batch process of this checkout runs with: the copies above, the fixture grader, no key."""
    env = {k: v for k, v in os.environ.items() if k != "STRIPE_SECRET_KEY"}
    env.update(STRIPEBENCH_ENVIRONMENTS=str(envs), STRIPEBENCH_GRADERS=str(FIXTURES / "graders"),
               PYTHONPATH=os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p))
    return env


def stripebench(*args: str, env: dict[str, str], **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "stripebench_tui", *args], env=env, text=True, capture_output=True,
                          timeout=240, **kw)


def trace_facts(episode_dir: Path) -> dict[str, Any]:
    """Score, turn count and the submitted customer id, read straight from the trace file (not through the report)."""
    score, turns = None, set()
    for line in (episode_dir / "trace.jsonl").read_text().splitlines()[1:]:
        event = json.loads(line)
        if event.get("turn", 0) >= 1:
            turns.add(event["turn"])
        if event.get("type") == "episode_end":
            score = event["score"]
    submission = (episode_dir / "workspace" / "submission.txt").read_text().strip()
    return {"score": score, "turns": len(turns), "submission": submission}


def ended_lines(text: str) -> list[str]:
    """The cell ids of the progress lines ``[n/N] ✓ CELL …`` that say an episode ended."""
    return [line.split()[2] for line in text.splitlines() if line.startswith("[") and "/" in line.split()[0]]
