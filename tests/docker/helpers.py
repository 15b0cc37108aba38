"""Shared helpers for the docker sandbox tests."""

from __future__ import annotations

import asyncio
from pathlib import Path

from stripebench_tui.core.bus import EventBus
from stripebench_tui.envs.catalog import find_environment
from stripebench_tui.runtime.docker_sandbox import DockerSandbox


def start_and_stop_sandbox(episode_dir: Path) -> DockerSandbox:
    """Make `episode_dir`, prepare a tiny-shop DockerSandbox there, start it and stop it again."""
    env = find_environment("tiny-shop")
    episode_dir.mkdir()
    box = DockerSandbox(env, episode_dir, {})
    box.prepare()

    async def go() -> None:
        bus = EventBus()
        try:
            await box.start(bus)
        finally:
            await box.stop()
            await bus.close(timeout=2)

    asyncio.run(go())
    return box
