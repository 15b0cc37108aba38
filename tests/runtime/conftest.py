"""Fixtures for runtime tests: the fixture environments and graders, and a /proc check for leftovers."""

from __future__ import annotations

from pathlib import Path

import pytest

from .helpers import FIXTURES


@pytest.fixture(autouse=True)
def fixture_envs(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STRIPEBENCH_ENVIRONMENTS", str(FIXTURES))
    monkeypatch.setenv("STRIPEBENCH_GRADERS", str(FIXTURES / "graders"))
    monkeypatch.delenv("STRIPE_SECRET_KEY", raising=False)
    return FIXTURES
