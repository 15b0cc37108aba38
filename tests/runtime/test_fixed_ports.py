"""A port an environment cannot move is held by one episode at a time, across processes."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from stripebench_tui.core.events import Event, Service
from stripebench_tui.envs.catalog import load_environment
from stripebench_tui.envs.manifest import Manifest
from stripebench_tui.errors import RuntimeProblem
from stripebench_tui.runtime.episode import Episode, EpisodeConfig
from stripebench_tui.runtime.fixed_ports import DIR_VAR, PortTaken, hold_ports, lock_dir

FIXTURE = Path(__file__).parents[1] / "fixtures" / "envs" / "tiny-shop"

HOLDER = textwrap.dedent("""
    import asyncio, sys
    from stripebench_tui.runtime.fixed_ports import hold_ports

    async def main():
        async with hold_ports([int(sys.argv[1])], "the other episode"):
            print("held", flush=True)
            await asyncio.to_thread(sys.stdin.readline)

    asyncio.run(main())
""")


@pytest.fixture(autouse=True)
def private_locks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "port-locks"
    monkeypatch.setenv(DIR_VAR, str(path))
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_holder(port: int) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(port)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "held\n"
    return proc


def test_the_manifest_checks_and_orders_its_fixed_ports() -> None:
    base = {"id": "demo-task", "title": "x", "category": "backend"}
    assert Manifest.model_validate({**base, "fixed_ports": [4243, 4242, 4243]}).fixed_ports == [4242, 4243]
    with pytest.raises(ValueError, match="70000 is not a TCP port"):
        Manifest.model_validate({**base, "fixed_ports": [70000]})


async def test_a_second_holder_waits_names_the_first_and_gets_the_port_when_it_ends() -> None:
    port = free_port()
    other = start_holder(port)
    heard: list[str] = []
    waiting = asyncio.Event()

    def say(line: str) -> None:
        heard.append(line)
        waiting.set()

    async def second() -> str:
        async with hold_ports([port], "this episode", say):
            return (lock_dir() / f"port-{port}.holder").read_text()

    task = asyncio.create_task(second())
    await asyncio.wait_for(waiting.wait(), 30)
    assert heard == [f"waiting for port {port}: another episode holds it (pid {other.pid}: the other episode)"]
    assert not task.done()
    assert other.stdin is not None
    other.stdin.write("\n")
    other.stdin.flush()
    assert await asyncio.wait_for(task, 30) == f"pid {os.getpid()}: this episode\n"
    assert other.wait(30) == 0
    assert len(heard) == 1  # said once, however long it waited


async def test_a_killed_holder_frees_the_port() -> None:
    port = free_port()
    other = start_holder(port)
    other.kill()
    other.wait(30)
    async with hold_ports([port], "after a kill -9"):
        pass


async def test_something_else_listening_on_the_port_is_an_error_with_the_fix() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        with pytest.raises(PortTaken, match=f"port {port} is in use by a process that is not an episode"):
            async with hold_ports([port], "galtee-basic"):
                pass
    async with hold_ports([port], "galtee-basic"):  # and the lock was let go
        pass


def test_a_lock_directory_others_can_write_is_refused(private_locks: Path) -> None:
    private_locks.mkdir(mode=0o777)
    private_locks.chmod(0o777)
    with pytest.raises(RuntimeProblem, match="not a private directory"):
        lock_dir()


@pytest.mark.slow
async def test_two_episodes_of_an_environment_with_a_fixed_port_run_one_after_the_other(tmp_path: Path) -> None:
    port = free_port()
    root = tmp_path / "envs" / "tiny-shop"
    shutil.copytree(FIXTURE, root)
    manifest = root / "environment.toml"
    lines = manifest.read_text().splitlines()
    first_table = next(i for i, line in enumerate(lines) if line.startswith("["))
    lines.insert(first_table, f"fixed_ports = [{port}]")
    manifest.write_text("\n".join(lines) + "\n")
    env = load_environment(root)
    first_ready, second_waits, second_ready = asyncio.Event(), asyncio.Event(), asyncio.Event()
    second_lines: list[str] = []

    def on_second(event: Event) -> None:
        if isinstance(event, Service) and event.service == "ports":
            second_lines.append(event.text)
            (second_waits if event.text.startswith("waiting") else second_ready).set()

    first = Episode(EpisodeConfig(env=env, agent="human", episode_dir=tmp_path / "first"),
                    subscribers=[lambda e: first_ready.set() if isinstance(e, Service) and e.service == "ports" else None])
    second = Episode(EpisodeConfig(env=env, agent="human", episode_dir=tmp_path / "second"), subscribers=[on_second])
    first_run = asyncio.create_task(first.run())
    await asyncio.wait_for(first_ready.wait(), 120)
    second_run = asyncio.create_task(second.run())
    await asyncio.wait_for(second_waits.wait(), 120)
    assert second_lines == [f"waiting for port {port}: another episode holds it "
                            f"(pid {os.getpid()}: tiny-shop, episode first)"]
    assert not second_ready.is_set()
    await asyncio.wait_for(first.ready.wait(), 120)
    first.stop("test")
    assert (await asyncio.wait_for(first_run, 120)).reason == "stopped"
    await asyncio.wait_for(second_ready.wait(), 120)
    assert second_lines[-1].startswith(f"holding port {port} for this episode")
    await asyncio.wait_for(second.ready.wait(), 120)
    second.stop("test")
    assert (await asyncio.wait_for(second_run, 120)).reason == "stopped"
