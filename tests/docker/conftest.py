"""Fixtures for the docker sandbox tests: a reachable engine with the base image, or a clear failure.

These tests need a real Docker engine. When none is reachable they FAIL with the reason
(`make test` brings one up: scripts/docker-engine.sh starts dockerd); set STRIPEBENCH_NO_DOCKER=1
to skip them on purpose on a machine without an engine.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "envs"
OPT_OUT = "STRIPEBENCH_NO_DOCKER"


@pytest.fixture(scope="session")
def docker_client():
    """A client of a reachable engine that has the base image; fails (not skips) without one."""
    from stripebench_tui.errors import RuntimeProblem
    from stripebench_tui.runtime.docker_engine import base_image_name, connect

    if os.environ.get(OPT_OUT) == "1":
        pytest.skip(f"{OPT_OUT}=1: docker sandbox tests skipped on purpose")
    try:
        client = connect(timeout=20)
    except RuntimeProblem as exc:
        pytest.fail(f"{exc} -- these tests need a Docker engine (set {OPT_OUT}=1 to skip them on purpose)",
                    pytrace=False)
    try:
        client.images.get(base_image_name())
    except Exception:  # noqa: BLE001
        pytest.fail(f"the base image {base_image_name()} is missing: run `stripebench images bootstrap` "
                    f"(or set {OPT_OUT}=1 to skip these tests on purpose)", pytrace=False)
    return client


@pytest.fixture(autouse=True)
def fixture_envs(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STRIPEBENCH_ENVIRONMENTS", str(FIXTURES))
    monkeypatch.setenv("STRIPEBENCH_GRADERS", str(FIXTURES / "graders"))
    monkeypatch.delenv("STRIPE_SECRET_KEY", raising=False)
    monkeypatch.delenv("STRIPEBENCH_SANDBOX", raising=False)
    return FIXTURES
