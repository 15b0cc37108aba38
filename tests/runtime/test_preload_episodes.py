"""Episodes of apps written for real Stripe: with ``stripe_preload = true`` they (their seed, the agent's shell)
create their objects on the emulator, and the watcher puts those objects in the trace.

The fixture apps (tests/fixtures/preload_envs/) read the secret key and never a base URL: a Flask app on
stripe-python, an Express app on stripe-node and express from npm.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from platformdirs import user_cache_dir

from stripebench_tui.core.events import Service, StripeObject, ToolCall, ToolResult
from stripebench_tui.core.trace import open_trace
from stripebench_tui.runtime.episode import Episode, EpisodeConfig

pytestmark = pytest.mark.slow
PRELOAD_ENVS = Path(__file__).resolve().parents[1] / "fixtures" / "preload_envs"
NODE_PACKAGES = ("stripe@23", "express@4")


def _node_modules() -> Path:
    """A node_modules holding express and stripe-node from npm, installed once into the cache."""
    prefix = Path(os.environ.get("STRIPEBENCH_NODE_APP_CACHE") or Path(user_cache_dir("stripebench")) / "node-express-stripe-23")
    if not all((prefix / "node_modules" / name / "package.json").exists() for name in ("stripe", "express")):
        prefix.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", *NODE_PACKAGES],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"npm install {' '.join(NODE_PACKAGES)} failed:\n{done.stderr[-2000:]}"
    return prefix / "node_modules"


async def _episode(tmp_path: Path, env_id: str) -> tuple[Episode, list]:
    episode = Episode(EpisodeConfig(env=str(PRELOAD_ENVS / env_id), episode_dir=tmp_path / env_id, grading=False))
    result = await episode.run()
    assert result.reason == "agent_done", (result.reason, result.error)
    return episode, list(open_trace(result.trace_path).iter_events())


def _objects(events: list, kind: str) -> list[StripeObject]:
    return [e for e in events if isinstance(e, StripeObject) and e.object_type == kind]


@pytest.mark.browser
async def test_unmodified_flask_app_seed_and_shell_use_the_emulator(tmp_path: Path) -> None:
    episode, events = await _episode(tmp_path, "preload-flask")
    assert any(isinstance(e, Service) and e.service == "seed" and e.status == "exited" and e.exit_code == 0
               for e in events)
    prices = [p for p in _objects(events, "price") if p.data.get("lookup_key") == "preload-plan"]
    assert len(prices) == 1 and prices[0].turn == 0  # the seed's, before the agent started
    # Stripe sends no event when a session is created: the watcher sees it when paying completes it
    submitted = (episode.sandbox.workspace / "submission.txt").read_text().strip()
    sessions = [s for s in _objects(events, "checkout.session") if s.object_id == submitted]
    assert sessions and sessions[-1].event_type == "checkout.session.completed"
    assert sessions[-1].data["amount_total"] == 2400 and sessions[-1].data["payment_status"] == "paid"
    pay = next(e for e in events if isinstance(e, ToolCall) and e.tool == "browser_click")
    # Seen in the turn of the click that paid: the click returns once the payment request it started is answered
    assert sessions[-1].turn == pay.turn
    shell = next(e for e in events if isinstance(e, ToolCall) and e.tool == "shell")
    checked = [e for e in events if isinstance(e, ToolResult) and e.call_id == shell.call_id]
    assert checked and "complete paid 2400" in checked[0].output, checked
    key = episode.backend.secret_key.encode()  # the preloads carry no key, and nothing printed one
    assert not [p for p in episode.sandbox.episode_dir.rglob("*") if p.is_file() and key in p.read_bytes()]


@pytest.mark.node
async def test_unmodified_express_app_on_stripe_node_uses_the_emulator(tmp_path: Path, monkeypatch) -> None:
    assert shutil.which("node") and shutil.which("npm"), "Node.js and npm are part of this machine's setup"
    monkeypatch.setenv("STRIPEBENCH_TEST_NODE_MODULES", str(_node_modules()))
    episode, events = await _episode(tmp_path, "preload-express")
    intents = _objects(events, "payment_intent")
    submitted = (episode.sandbox.workspace / "submission.txt").read_text().strip()
    assert submitted.startswith("pi_") and submitted in {i.object_id for i in intents}
    latest = [i for i in intents if i.object_id == submitted][-1]
    assert latest.data["amount"] == 2500 and latest.data["status"] == "succeeded"
