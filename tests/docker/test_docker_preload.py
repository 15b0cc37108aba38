"""The preloads inside a container: an app that sets only the key reaches the emulator on this machine."""

from __future__ import annotations

from pathlib import Path

import pytest

from stripebench_emulator.testing import TEST_KEY, emulator, emulator_server, stripe_client  # noqa: F401 - pytest fixtures, requested by name below
from stripebench_tui.core.bus import EventBus
from stripebench_tui.envs.catalog import find_environment
from stripebench_tui.envs.manifest import Environment
from stripebench_tui.runtime.docker_sandbox import DockerSandbox

pytestmark = [pytest.mark.docker, pytest.mark.slow]

APP = ("import os, stripe; stripe.api_key = os.environ['STRIPE_SECRET_KEY']; "
       "print(stripe.Customer.create(email='container@example.com').id)")


async def test_python_in_the_container_reaches_the_emulator_with_the_preload(docker_client, tmp_path: Path,
                                                                           emulator, stripe_client) -> None:  # noqa: F811 - pytest fixtures imported above, requested by name
    shop = find_environment("tiny-shop")  # its image; the switch set as an overlay of ours would set it
    env = Environment(shop.root, shop.manifest.model_copy(update={"stripe_preload": True}))
    episode_dir = tmp_path / "ep"
    episode_dir.mkdir()
    box = DockerSandbox(env, episode_dir, {"STRIPE_API_BASE": emulator.url, "STRIPE_SECRET_KEY": TEST_KEY})
    box.prepare()
    bus = EventBus()
    log = tmp_path / "app.log"
    try:
        await box.start(bus)
        (box.workspace / "app.py").write_text(APP)
        with log.open("wb") as out:
            code = box.start_process("python3 app.py", cwd=box.workspace, env={}, log=out).wait(60)
    finally:
        await box.stop()
        await bus.close(timeout=2)
    output = log.read_text()
    assert code == 0, output
    assert stripe_client.v1.customers.retrieve(output.strip().splitlines()[-1]).email == "container@example.com"
    assert box.container_gone()
