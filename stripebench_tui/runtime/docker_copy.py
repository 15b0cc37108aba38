"""The docker sandbox's copy mode, for an engine on another machine: files go in and out through the engine's API.

A bind mount names a folder on the engine's machine. When ``DOCKER_HOST`` points at an engine over the network
(``tcp://``, ``ssh://``, or a ``unix://`` socket that is not on this machine) the episode's folders are not
there, so the container gets an anonymous volume at each path a bind mount would have used (the same paths:
traces, graders and the agent still see one path), the files are copied into those volumes before the
container starts, and the workspace is copied back here after every tool call (graders read it between
turns) and once more when the episode ends, before the container and its volumes are removed.

``STRIPEBENCH_DOCKER_COPY=1`` forces copy mode with any engine, ``=0`` forces bind mounts (say, a ``tcp://``
engine on this very machine). The emulator and the app's health checks still go over the network: the
engine's host must reach this machine's loopback ports (the same machine over TCP, or a tunnel).
"""

from __future__ import annotations

import io
import os
import shutil
import tarfile
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stripebench_tui.archives import extract_within
from stripebench_tui.errors import UserError

if TYPE_CHECKING:  # docker is loaded when a Docker sandbox is used
    from docker.models.containers import Container

COPY_VAR = "STRIPEBENCH_DOCKER_COPY"
_YES, _NO = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def engine_is_remote(host: str) -> bool:
    """Whether the engine at ``host`` (DOCKER_HOST's value, "" for the default socket) cannot see this machine's files."""
    host = host.strip()
    if not host:
        return False
    if host.startswith("unix://"):
        return not Path(host[len("unix://"):]).exists()
    if host.startswith("npipe://"):
        return False
    return True  # tcp://, ssh://, http(s)://: another machine, as far as paths go


def copy_mode(environ: dict[str, str] | None = None) -> bool:
    """Copy mode for this episode: forced by STRIPEBENCH_DOCKER_COPY, otherwise when the engine is remote."""
    environ = dict(os.environ) if environ is None else environ
    forced = environ.get(COPY_VAR, "").strip().lower()
    if forced in _YES:
        return True
    if forced in _NO:
        return False
    if forced:
        raise UserError(f"{COPY_VAR} must be 1 (copy files in and out) or 0 (bind mounts), not {forced!r}")
    return engine_is_remote(environ.get("DOCKER_HOST", ""))


def volume_mounts(targets: list[str]) -> list[Any]:
    """An anonymous volume at each path (removed with the container: ``remove(v=True)``)."""
    # docker loads only when a Docker sandbox is used (runtime.docker_engine.connect)
    from docker.types import Mount

    return [Mount(target=t, source=None, type="volume") for t in dict.fromkeys(targets)]


def pack(sources: dict[str, Path], uid: int, gid: int) -> bytes:
    """A tar of ``{name in the archive: file or folder here}``, every member owned by ``uid:gid``."""

    def owned(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid, info.gid, info.uname, info.gname = uid, gid, "", ""
        return info

    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name, source in sources.items():
            tar.add(str(source), arcname=name, filter=owned)
    return out.getvalue()


def push(container: Container, into: str, sources: dict[str, Path], uid: int = 0, gid: int = 0) -> None:
    """Copy ``{name: file or folder here}`` into the container's folder ``into`` (owned by ``uid:gid`` there).

    The engine creates what the archive names but leaves the folder ``into`` as it is (a volume's root stays
    root's): what the agent must own goes in as a named member, never as ``into``'s own contents.
    """
    if not container.put_archive(into, pack(sources, uid, gid)):
        raise OSError(f"the engine refused to copy {', '.join(map(str, sources.values()))} into the container")


def pull(container: Container, at: str, target: Path) -> None:
    """Replace the folder ``target`` here with the container's folder ``at`` (whole, or not at all)."""
    stream, _stat = container.get_archive(at)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        with tempfile.TemporaryFile() as raw:
            for chunk in stream:
                raw.write(chunk)
            raw.seek(0)
            with tarfile.open(fileobj=raw, mode="r|") as tar:
                # "tar", not "data": a workspace's venv may link to the container's absolute interpreter path.
                extract_within(tar, staging)
        copied = staging / Path(at.rstrip("/")).name
        if not copied.is_dir():
            raise OSError(f"the container's {at} came back as no folder")
        # The folder itself stays (a process here may have it as its working directory); its entries are replaced.
        target.mkdir(exist_ok=True)
        for entry in list(target.iterdir()):
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
        for entry in list(copied.iterdir()):
            entry.rename(target / entry.name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


__all__ = ["COPY_VAR", "copy_mode", "engine_is_remote", "pack", "pull", "push", "volume_mounts"]
