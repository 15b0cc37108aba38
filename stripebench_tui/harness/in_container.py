"""Start an external harness inside the episode's container, through the sandbox's ``docker exec`` relay.

The local process is the relay (``runtime.docker_exec``): its stdout/stderr are the harness's, its exit code is
the harness's, and SIGTERM to it ends the harness's whole session inside the container, so the log pumps and
the stop path of ``ExternalAgent`` work unchanged. The gateway listens on this machine's 127.0.0.1, which the
container reaches because it shares the host network.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from stripebench_tui.runtime.docker_exec import ENV_VAR

if TYPE_CHECKING:  # docker is loaded when a Docker sandbox is used
    from stripebench_tui.runtime.docker_sandbox import DockerSandbox


HARNESS_MOUNT = "/opt/harnesses"  # where the container sees the harness cache (read-only)


def in_container(sandbox: DockerSandbox, argv: list[str], env: dict[str, str],
                 moved: tuple[str, str] | None = None) -> tuple[list[str], dict[str, str]]:
    """(local argv, local env) that run ``argv`` with ``env`` in the sandbox's container, in its workspace.

    ``moved`` is (a folder here, where the container sees it): paths under it in ``argv`` and ``env`` are rewritten.
    """
    if moved is not None:
        here, there = moved
        argv = [_move(token, here, there) for token in argv]
        env = {name: _move(value, here, there) for name, value in env.items()}
    relay_env = {**sandbox.process_env(), ENV_VAR: json.dumps(sandbox.container_env(env))}
    return sandbox.exec_argv(argv), relay_env


def _move(value: str, here: str, there: str) -> str:
    return value.replace(here, there) if here + "/" in value or value == here else value


__all__ = ["HARNESS_MOUNT", "in_container"]
