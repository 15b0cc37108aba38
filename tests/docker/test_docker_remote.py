"""DOCKER_HOST=tcp://… (an engine that cannot see this machine's files): the workspace is copied in, not bind-mounted.

The engine is the test machine's own, reached through a TCP listener of this test on 127.0.0.1 that relays
to its unix socket: the sandbox sees ``tcp://127.0.0.1:PORT`` exactly as it would see an engine elsewhere.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stripebench_tui.core.events import Service
from stripebench_tui.errors import UserError
from stripebench_tui.runtime.docker_copy import COPY_VAR, copy_mode
from stripebench_tui.runtime.docker_engine import LABEL_EPISODE
from stripebench_tui.runtime.episode import Episode, EpisodeConfig
from stripebench_tui.runtime.reaper import tagged_pids


def _pipe(src: socket.socket, dst: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := src.recv(65536):
            dst.sendall(data)
    with contextlib.suppress(OSError):
        dst.shutdown(socket.SHUT_WR)


@pytest.fixture
def tcp_engine() -> Iterator[str]:
    """``tcp://127.0.0.1:PORT``, relayed to the local engine's unix socket (loopback only)."""
    host = os.environ.get("DOCKER_HOST", "")
    path = host[len("unix://"):] if host.startswith("unix://") else "/var/run/docker.sock"
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    conns: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # the listener was closed: the test is over
            upstream = socket.socket(socket.AF_UNIX)
            upstream.connect(path)
            conns.extend((client, upstream))
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=_pipe, args=(a, b), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"tcp://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        listener.close()
        thread.join(5)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.close()


def test_copy_mode_follows_docker_host(tmp_path: Path) -> None:
    sock = tmp_path / "docker.sock"
    sock.touch()
    assert copy_mode({}) is False and copy_mode({"DOCKER_HOST": f"unix://{sock}"}) is False
    assert copy_mode({"DOCKER_HOST": "tcp://127.0.0.1:2375"}) is True
    assert copy_mode({"DOCKER_HOST": "ssh://ci@builder"}) is True
    assert copy_mode({"DOCKER_HOST": f"unix://{tmp_path}/elsewhere.sock"}) is True  # not a socket on this machine
    assert copy_mode({COPY_VAR: "1"}) is True and copy_mode({"DOCKER_HOST": "tcp://h:1", COPY_VAR: "0"}) is False
    with pytest.raises(UserError, match=f"{COPY_VAR} must be 1 .* or 0"):
        copy_mode({COPY_VAR: "maybe"})


@pytest.mark.docker
@pytest.mark.slow
async def test_remote_engine_episode_copies_the_workspace_in_and_back(docker_client, tcp_engine: str, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", tcp_engine)
    monkeypatch.delenv(COPY_VAR, raising=False)
    mounts: list[dict[str, Any]] = []

    def inspect_when_up(event: Any) -> None:  # the container only exists during the episode
        if isinstance(event, Service) and event.service == "docker" and event.status == "healthy":
            found = docker_client.containers.list(filters={"label": f"{LABEL_EPISODE}={episode.sandbox.tag}"},
                                                 ignore_removed=True)
            mounts.extend(found[0].attrs["Mounts"])

    episode = Episode(EpisodeConfig(env="tiny-shop", sandbox="docker", episode_dir=tmp_path / "ep"),
                      subscribers=[inspect_when_up])
    await episode.run()
    result = episode.result
    assert episode.sandbox.copy is True
    assert result is not None and result.reason == "agent_done", result
    # every criterion passed, the submission one included: graders read the copied-back workspace between turns
    assert result.score == 1.0 and result.passed is True
    workspace = result.episode_dir / "workspace"
    assert mounts and not [m for m in mounts if m["Type"] == "bind"], mounts
    assert {m["Destination"]: m["Type"] for m in mounts}.get(str(result.episode_dir)) == "volume"  # workspace's home
    # what the agent's shell wrote in the container is here after the episode
    assert (workspace / "submission.txt").read_text().startswith("cus_")
    assert "metadata" in (workspace / "handlers.py").read_text()  # the oracle's edit, made by the files tool inside
    assert docker_client.containers.list(all=True, filters={"label": f"{LABEL_EPISODE}={episode.sandbox.tag}"},
                                       ignore_removed=True) == []
    volumes = {m["Name"] for m in mounts}
    assert volumes and not volumes & {v.name for v in docker_client.volumes.list()}  # removed with the container
    assert tagged_pids(episode.sandbox.tag) == []
