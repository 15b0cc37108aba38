"""Removing stale episode containers while other episodes' containers come and go on the same engine."""

from __future__ import annotations

import os
import socket

import pytest

from stripebench_tui.runtime import docker_engine
from stripebench_tui.runtime.docker_engine import LABEL_EPISODE, LABEL_OWNER, base_image_name, remove_stale_containers


def _dead_to_us_only(monkeypatch: pytest.MonkeyPatch) -> str:
    """An owner label that this process's sweep takes for dead and every other process's for alive (this process):
    the suite's other worker starts episodes meanwhile, and their sweeps must leave these containers alone."""
    owner = f"{socket.gethostname()}:{os.getpid()}"
    alive = docker_engine._owner_alive
    monkeypatch.setattr(docker_engine, "_owner_alive", lambda label: label != owner and alive(label))
    return owner


def test_a_container_removed_by_someone_else_meanwhile_does_not_fail_the_sweep(docker_client,
                                                                                 monkeypatch: pytest.MonkeyPatch):
    """The engine lists the labelled containers, then each is looked at in turn. Another episode ending between
    the two removes its container: the sweep must go on (it failed an episode's start with a 404 before)."""
    owner = _dead_to_us_only(monkeypatch)
    made = [docker_client.containers.create(base_image_name(), command=["true"],
                                            labels={LABEL_EPISODE: f"stale-test-{n}", LABEL_OWNER: owner})
            for n in (1, 2)]
    look = docker_client.api.inspect_container
    taken: list[str] = []

    def look_after_the_other_went(container: str, *args: object, **kwargs: object) -> dict:
        ours = {c.id for c in made}
        if not taken and container in ours:  # between the list and this look, the other one is removed
            other = next(c for c in made if c.id != container)
            docker_client.api.remove_container(other.id, force=True)
            taken.append(other.name)
        return look(container, *args, **kwargs)

    monkeypatch.setattr(docker_client.api, "inspect_container", look_after_the_other_went)
    try:
        removed = remove_stale_containers(docker_client)
    finally:
        monkeypatch.undo()
        for container in made:
            try:
                docker_client.api.remove_container(container.id, force=True)
            except Exception:  # noqa: BLE001 - already gone, as intended
                pass
    assert len(taken) == 1
    left = next(c.name for c in made if c.name not in taken)
    assert left in removed and taken[0] not in removed
