"""Fixtures for grading tests: a tiny environment on disk, a context for it, and the emulator's fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

from stripebench_emulator.testing import TEST_KEY, api, emulator, emulator_server, stripe_client, stripe_sdk  # noqa: F401 - pytest fixtures, requested by name below
from stripebench_tui.envs.catalog import load_environment
from stripebench_tui.envs.manifest import Environment
from stripebench_tui.grading import GradingContext

MANIFEST = """\
id = "{id}"
title = "A tiny shop"
category = "backend"
submission = "submission.txt"
"""


def write_env(root: Path, env_id: str = "tiny-shop", extra: str = "") -> Environment:
    """An environment directory with a manifest, a problem and an empty workspace."""
    d = root / env_id
    (d / "workspace").mkdir(parents=True, exist_ok=True)
    (d / "PROBLEM.md").write_text("Sell things.\n")
    (d / "environment.toml").write_text(MANIFEST.format(id=env_id) + extra)
    return load_environment(d)


@pytest.fixture
def env(tmp_path: Path) -> Environment:
    return write_env(tmp_path / "envs")


@pytest.fixture
def ctx(env: Environment, tmp_path: Path) -> GradingContext:
    """A context with no Stripe backend reachable (checks that need one must not be called)."""
    episode = tmp_path / "episode"
    (episode / "workspace").mkdir(parents=True)
    c = GradingContext(env=env, episode_dir=episode, workspace=episode / "workspace", stripe_api_base="http://127.0.0.1:9",
                       stripe_api_key=TEST_KEY)
    yield c
    c.close()
