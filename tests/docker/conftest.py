"""Fixtures for the docker sandbox tests: a reachable engine with the base image, or a clear failure.

These tests need a real Docker engine. When none is reachable they FAIL with the reason
(`make test` brings one up: scripts/docker-engine.sh starts dockerd); set STRIPEBENCH_NO_DOCKER=1
to skip them on purpose on a machine without an engine.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from stripebench_tui.core.bus import EventBus
from stripebench_tui.envs.catalog import find_environment
from stripebench_tui.runtime.docker_sandbox import DockerSandbox

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
    except Exception:  # noqa: BLE001 - any failure to read the image: say how to make it
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


@pytest.fixture
async def sandbox(docker_client, tmp_path: Path):
    """A started tiny-shop DockerSandbox (no seed, no services); stopped and checked gone after the test."""
    env = find_environment("tiny-shop")
    episode_dir = tmp_path / "ep"
    episode_dir.mkdir()
    box = DockerSandbox(env, episode_dir, {"STRIPE_API_BASE": "http://127.0.0.1:9", "STRIPE_SECRET_KEY": "sk_test_x"})
    box.prepare()
    bus = EventBus()
    try:
        await box.start(bus)
        yield box
    finally:
        await box.stop()
        await bus.close(timeout=2)
    assert box.container_gone()
