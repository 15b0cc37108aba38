"""Fixtures for runtime tests: the fixture environments and graders (autouse, from tests/fixture_envs.py)."""

from __future__ import annotations

from tests.fixture_envs import fixture_envs  # noqa: F401  (registers the autouse fixture for this directory)
