"""The `fixture_envs` fixture shared by tests/runtime and tests/tui_live: point stripebench at tests/fixtures/envs.

Each directory's conftest.py imports it, which registers it there as autouse (function scope).
"""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "envs"


@pytest.fixture(autouse=True)
def fixture_envs(monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run on the fixture environments and graders, with no real Stripe key in reach."""
    monkeypatch.setenv("STRIPEBENCH_ENVIRONMENTS", str(FIXTURES))
    monkeypatch.setenv("STRIPEBENCH_GRADERS", str(FIXTURES / "graders"))
    monkeypatch.delenv("STRIPE_SECRET_KEY", raising=False)
    return FIXTURES
