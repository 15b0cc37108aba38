"""The agent's shell in the container: non-root, confined to the workspace; a dead container is said clearly."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from stripebench_tui.core.bus import EventBus
from stripebench_tui.errors import RuntimeProblem
from stripebench_tui.runtime.docker_engine import LABEL_EPISODE, LABEL_OWNER, base_image_name
from stripebench_tui.runtime.docker_sandbox import DockerSandbox
from tests.docker.helpers import start_and_stop_sandbox

pytestmark = [pytest.mark.docker, pytest.mark.slow]


async def test_shell_runs_as_non_root_and_cannot_write_outside_the_workspace(sandbox: DockerSandbox) -> None:
    host = sandbox.container.attrs["HostConfig"]
    spec = sandbox.env.manifest.docker
    assert host["NanoCpus"] == int(spec.cpus * 1e9) and host["Memory"] == 1024 ** 3  # the manifest's "1g"
    assert host["NetworkMode"] == "host" and host["ReadonlyRootfs"] is True
    executor = sandbox.tool_executor(["shell"])
    await executor.start()
    try:
        who = await executor.call("shell", {"command": "id -u; pwd"})
        uid, cwd = who.text.split()[:2]
        assert int(uid) != 0 and int(uid) == sandbox.uid
        assert cwd == str(sandbox.workspace)
        for target in ("/etc/evil", "/usr/evil", "/evil", "/opt/stripebench/stripebench_tui/evil",
                       f"{sandbox.env.root}/evil"):
            out = await executor.call("shell", {"command": f"echo x > {target}"})
            assert out.exit_code != 0, target
            assert not Path(target).exists()
        out = await executor.call("shell", {"command": "echo hello > made.txt && ls -n made.txt"})
        assert out.exit_code == 0, out.text
        made = sandbox.workspace / "made.txt"
        assert made.read_text() == "hello\n"  # this machine reads what the agent wrote
        assert made.stat().st_uid == sandbox.uid == (os.getuid() or 1000)
    finally:
        await executor.close()


async def test_a_container_that_dies_is_reported_clearly(sandbox: DockerSandbox) -> None:
    executor = sandbox.tool_executor(["shell"])
    await executor.start()
    try:
        assert (await executor.call("shell", {"command": "true"})).exit_code == 0
        sandbox.container.kill()
        with pytest.raises(RuntimeProblem, match=r"the container stripebench-tiny-shop-\w+ stopped \(exit code 137\); "
                                                 r"the shell tool cannot run"):
            await executor.call("shell", {"command": "true"})
    finally:
        await executor.close()


async def test_port_collision_is_one_clear_reason(sandbox: DockerSandbox) -> None:
    import socket

    from stripebench_tui.runtime.services import ServiceFailed

    port = int(sandbox.variables()["APP_PORT"])
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen()
        with pytest.raises(ServiceFailed, match=f"port {port} \\(APP_PORT\\) of service app is already in use"):
            await sandbox.start_services(EventBus())


def test_stale_container_of_a_dead_owner_is_removed_on_next_start(docker_client, tmp_path: Path) -> None:
    tag = uuid.uuid4().hex
    stale = docker_client.containers.run(base_image_name(), ["sleep", "infinity"], detach=True, network_mode="none",
                                         name=f"stripebench-stale-{tag[:8]}",
                                         labels={LABEL_EPISODE: tag, LABEL_OWNER: f"{os.uname().nodename}:999999999"})
    alive = docker_client.containers.run(base_image_name(), ["sleep", "infinity"], detach=True, network_mode="none",
                                         name=f"stripebench-alive-{tag[:8]}",
                                         labels={LABEL_EPISODE: tag + "x", LABEL_OWNER: f"{os.uname().nodename}:{os.getpid()}"})
    try:
        start_and_stop_sandbox(tmp_path / "ep")
        names = {c.name for c in docker_client.containers.list(all=True, ignore_removed=True)}
        assert stale.name not in names  # its owner (pid 999999999) is gone
        assert alive.name in names  # its owner (this test) is alive: not touched
    finally:
        for c in (stale, alive):
            try:
                c.remove(force=True)
            except Exception:  # noqa: BLE001 - already removed
                pass
