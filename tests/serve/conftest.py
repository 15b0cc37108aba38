"""The serve tests run live episodes on the fixture environments (tiny-shop), like tests/tui_live."""

from __future__ import annotations

from tests.fixture_envs import fixture_envs  # noqa: F401  (registers the autouse fixture)
