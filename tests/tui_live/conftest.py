"""Live TUI tests run on the fixture environments (tiny-shop), like tests/runtime."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "envs"


@pytest.fixture(autouse=True)
def fixture_envs(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STRIPEBENCH_ENVIRONMENTS", str(FIXTURES))
    monkeypatch.setenv("STRIPEBENCH_GRADERS", str(FIXTURES / "graders"))
    monkeypatch.delenv("STRIPE_SECRET_KEY", raising=False)
    return FIXTURES
