"""The manifest's setup commands run in the fresh workspace before the seed; a failing one ends setup."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from stripebench_tui.core.bus import EventBus
from stripebench_tui.core.events import Service
from stripebench_tui.envs.catalog import load_environment
from stripebench_tui.runtime.local import LocalSandbox
from stripebench_tui.runtime.services import ServiceFailed

FIXTURE = Path(__file__).parents[1] / "fixtures" / "envs" / "tiny-shop"


def _env_with_setup(tmp_path: Path, commands: list[str]):
    root = tmp_path / "envs" / "tiny-shop"
    shutil.copytree(FIXTURE, root)
    manifest = root / "environment.toml"
    lines = manifest.read_text().splitlines()
    # top-level keys must come before the first table
    first_table = next(i for i, line in enumerate(lines) if line.startswith("["))
    lines.insert(first_table, "setup = " + repr(commands).replace("'", '"'))
    manifest.write_text("\n".join(lines) + "\n")
    return load_environment(root)


async def test_setup_commands_run_in_order_in_the_workspace(tmp_path: Path) -> None:
    env = _env_with_setup(tmp_path, ["echo one > setup.txt", "echo two >> setup.txt; echo visible"])
    sandbox = LocalSandbox(env, tmp_path / "episode", {})
    sandbox.prepare()
    bus, seen = EventBus(), []
    bus.subscribe(seen.append)
    try:
        await sandbox.run_setup(bus)
        await bus.drain(5)
    finally:
        await bus.close()
    assert (sandbox.workspace / "setup.txt").read_text() == "one\ntwo\n"
    assert any(isinstance(e, Service) and e.service == "setup" and "visible" in e.text for e in seen)
    assert not (env.workspace / "setup.txt").exists()  # the environment itself is untouched


async def test_a_failing_setup_command_stops_with_its_number_and_code(tmp_path: Path) -> None:
    env = _env_with_setup(tmp_path, ["true", "exit 3", "touch never.txt"])
    sandbox = LocalSandbox(env, tmp_path / "episode", {})
    sandbox.prepare()
    bus = EventBus()
    try:
        with pytest.raises(ServiceFailed, match=r"setup command 2 \(exit 3\) exited with code 3"):
            await sandbox.run_setup(bus)
    finally:
        await bus.close()
    assert not (sandbox.workspace / "never.txt").exists()
