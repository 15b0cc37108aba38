"""Shared by the real-harness tests: the pinned harness (installed by our installer if missing), the tiny-shop
solution as shell commands, and a headless `stripebench run` of an external harness against a scripted model."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from stripebench_tui.harness.harnesses import harness_status, install_harness
from tests.fixture_envs import FIXTURES
from tests.gateway.test_external_episode import SIGN_UP

REPO = Path(__file__).resolve().parents[2]


def pinned_harness(name: str, version: str) -> str:
    """The path of harness ``name`` at ``version``, installed into the harness cache first when missing."""
    where, _ = harness_status(name)
    if where is None:
        install_harness(name)
    where, installed = harness_status(name)
    assert where is not None, f"the {name} install produced no executable"
    assert installed == version, installed
    return where


def tiny_shop_commands() -> list[str]:
    """Look around, write the solution's handlers.py, sign up Alice: the tiny-shop fixture solved from a shell."""
    handlers = (FIXTURES / "tiny-shop" / "solution" / "handlers.py").read_text()
    return ["ls && head -3 handlers.py", "cat > handlers.py <<'PYEOF'\n" + handlers + "PYEOF", SIGN_UP]


def run_headless(agent: str, base_url: str, episode: Path, key_var: str, key: str, model: str) -> subprocess.CompletedProcess:
    """`stripebench run tiny-shop --headless --agent AGENT` in a subprocess; asserts it passed."""
    env = {**os.environ, "PYTHONPATH": str(REPO), key_var: key}
    done = subprocess.run([sys.executable, "-m", "stripebench_tui", "run", "tiny-shop", "--headless", "--agent", agent,
                           "--base-url", base_url, "--model", model, "--episode-dir", str(episode)],
                          capture_output=True, text=True, timeout=300, env=env, cwd=REPO)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    return done
