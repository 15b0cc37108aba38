"""Drills: the runner killed at random moments, many episodes at once (the fixture environments, autouse)."""

from __future__ import annotations

from tests.fixture_envs import fixture_envs  # noqa: F401  (registers the autouse fixture for this directory)
