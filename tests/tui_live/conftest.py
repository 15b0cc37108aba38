"""Live TUI tests run on the fixture environments (tiny-shop), like tests/runtime."""

from __future__ import annotations

from tests.fixture_envs import FIXTURES, fixture_envs  # noqa: F401  (FIXTURES for test_fork; registers the autouse fixture)
