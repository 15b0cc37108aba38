"""The Docker engine as stripebench uses it: connecting, the base image, and sweeping stale containers.

The engine is whatever ``docker.from_env()`` finds (``DOCKER_HOST``, else the local
socket), so a remote engine works the same way. Environment images build on a base
image, ``$STRIPEBENCH_BASE_IMAGE`` or ``stripebench/base:bookworm``; the latter needs
no registry: ``stripebench images bootstrap`` makes it with debootstrap and imports it.
Every episode container carries the labels below, so a container left behind by a
killed run is found and removed on the next start.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stripebench_tui.errors import RuntimeProblem

if TYPE_CHECKING:  # docker is loaded when a Docker sandbox is used
    from docker import DockerClient

DEFAULT_BASE_IMAGE = "stripebench/base:bookworm"
BASE_IMAGE_VAR = "STRIPEBENCH_BASE_IMAGE"
LABEL_EPISODE = "stripebench.episode"  # the episode's process tag
LABEL_OWNER = "stripebench.owner"  # "<hostname>:<pid>" of the stripebench process that started it
# What agents reach for besides Python: curl (the hints say "curl the endpoint"), ps/kill, sqlite3.
BOOTSTRAP_PACKAGES = "python3,python3-venv,ca-certificates,curl,procps,sqlite3"
BOOTSTRAP_LABEL = "stripebench.bootstrap"  # the package list the image was made with (another list: rebuilt)
SUITE = "bookworm"


def base_image_name() -> str:
    """The image environment images build on: $STRIPEBENCH_BASE_IMAGE, else the bootstrapped one."""
    return os.environ.get(BASE_IMAGE_VAR) or DEFAULT_BASE_IMAGE


def engine_address() -> str:
    """Where the engine is looked for, in the user's words."""
    return os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"


def connect(timeout: float = 60.0) -> Any:
    """A client of a reachable engine; RuntimeProblem (one line, how to fix it) when there is none."""
    try:
        # docker loads when the engine is needed, not with this module; a missing package is one line
        import docker
    except ImportError:  # pragma: no cover - a dependency of the package
        raise RuntimeProblem("the docker Python package is missing (pip install docker)") from None
    try:
        client = docker.from_env(timeout=int(timeout))
        client.ping()
    except Exception as exc:  # noqa: BLE001 - the SDK raises many kinds; all mean "not reachable"
        raise RuntimeProblem(f"no Docker engine reachable at {engine_address()} ({_short(exc)}); start dockerd "
                             "or point DOCKER_HOST at an engine (`stripebench doctor` checks it)") from None
    return client


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:200]


def owner_label() -> str:
    """This process, as the owner label of the containers it starts."""
    return f"{socket.gethostname()}:{os.getpid()}"


def _owner_alive(owner: str) -> bool:
    host, _, pid = owner.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return True  # another machine's container (a shared remote engine): not ours to judge
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_containers(client: DockerClient) -> list[str]:
    """Remove episode containers whose stripebench process on this machine is gone; returns their names."""
    removed = []
    # ignore_removed: another episode's container may go between the engine's list and docker-py's look at each
    # one (its episode ending meanwhile); without it that look's 404 failed this episode's start
    for container in client.containers.list(all=True, filters={"label": LABEL_EPISODE}, ignore_removed=True):
        owner = container.labels.get(LABEL_OWNER, "")
        if owner and _owner_alive(owner):
            continue
        with contextlib.suppress(Exception):
            container.remove(force=True, v=True)
            removed.append(container.name)
    return removed


def find_mirror(sources: tuple[Path, ...] = (Path("/etc/apt/sources.list"), Path("/etc/apt/sources.list.d"))) -> str:
    """The Debian mirror this machine's apt uses (deb822 ``URIs:`` or one-line ``deb URI``), else deb.debian.org."""
    files: list[Path] = []
    for src in sources:
        if src.is_dir():
            files += sorted(p for p in src.iterdir() if p.suffix in (".list", ".sources"))
        elif src.is_file():
            files.append(src)
    for path in files:
        with contextlib.suppress(OSError):
            for line in path.read_text().splitlines():
                words = line.split()
                if words[:1] == ["URIs:"] and len(words) > 1 and "security" not in words[1]:
                    return words[1]
                if words[:1] == ["deb"]:
                    uri = next((w for w in words[1:] if "://" in w), "")
                    if uri and "security" not in uri:
                        return uri
    return "http://deb.debian.org/debian"


def _unmount_under(root: Path) -> None:
    """Lazily unmount whatever debootstrap left mounted inside ``root`` (deepest first)."""
    with contextlib.suppress(OSError):
        mounts = [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()]
        for point in sorted((m for m in mounts if m.startswith(str(root) + "/")), key=len, reverse=True):
            subprocess.run(["umount", "-l", point], check=False, capture_output=True)


def bootstrap_base_image(client: DockerClient, tag: str = DEFAULT_BASE_IMAGE, *, force: bool = False,
                         progress: Callable[[str], None] = print, mirror: str | None = None) -> tuple[str, bool]:
    """Build the offline base image (debootstrap + import); returns (image id, built). Cached unless ``force``."""
    if not force:
        with contextlib.suppress(Exception):
            image = client.images.get(tag)
            made_with = (image.labels or {}).get(BOOTSTRAP_LABEL)
            if made_with == BOOTSTRAP_PACKAGES:
                progress(f"{tag} already exists ({image.short_id}); --force rebuilds it")
                return image.id, False
            progress(f"{tag} exists but was made with other packages ({made_with or 'unknown'}): rebuilding")
    if shutil.which("debootstrap") is None:
        raise RuntimeProblem("debootstrap is not installed (apt-get install debootstrap), "
                             f"or set {BASE_IMAGE_VAR} to an image your engine can pull, e.g. python:3.11-slim")
    if os.geteuid() != 0:
        raise RuntimeProblem("debootstrap needs root: run `sudo stripebench images bootstrap`, "
                             f"or set {BASE_IMAGE_VAR} to an image your engine can pull, e.g. python:3.11-slim")
    mirror = mirror or find_mirror()
    with tempfile.TemporaryDirectory(prefix="stripebench-rootfs-") as tmp:
        rootfs = Path(tmp) / "rootfs"
        progress(f"debootstrap {SUITE} from {mirror} (about a minute)…")
        cmd = ["debootstrap", "--variant=minbase", f"--include={BOOTSTRAP_PACKAGES}", SUITE, str(rootfs), mirror]
        # A session of its own, so an interruption can stop debootstrap and everything it runs in the chroot.
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
        try:
            assert proc.stdout is not None
            last: list[str] = []
            counts = {"Retrieving": 0, "Validating": 0, "Extracting": 0, "Unpacking": 0, "Configuring": 0}
            for line in proc.stdout:
                line = line.rstrip()
                last = (last + [line])[-5:]
                verb = line[3:].split(" ", 1)[0] if line.startswith("I: ") else ""
                if verb in counts:
                    counts[verb] += 1
                    if counts[verb] % 25 == 1:  # a line now and then, not one per package
                        progress(f"  {verb.lower()} packages ({counts[verb]})…")
                elif line.startswith("I: "):
                    progress("  " + line[3:])
        except BaseException:  # Ctrl+C or an error: stop it, and never delete through its /proc or /sys mounts
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            _unmount_under(rootfs)
            raise
        code = proc.wait()
        _unmount_under(rootfs)
        if code != 0:
            raise RuntimeProblem(f"debootstrap failed (exit {proc.returncode}): {' | '.join(last)}")
        # Smaller image: the package caches and docs are not needed at run time.
        for sub in ("var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc", "usr/share/man"):
            for child in (rootfs / sub).glob("*"):
                if child.is_file():
                    child.unlink()
                elif child.is_dir() and child.name != "partial":
                    shutil.rmtree(child, ignore_errors=True)
        progress("packing the root filesystem…")
        archive = Path(tmp) / "rootfs.tar"
        with tarfile.open(archive, "w") as tar:
            for child in sorted(rootfs.iterdir()):
                tar.add(child, arcname=child.name)
        shutil.rmtree(rootfs, ignore_errors=True)
        size = archive.stat().st_size
        progress(f"importing {size / 1e6:.0f} MB into the engine as {tag}…")
        repo, _, version = tag.rpartition(":") if ":" in tag.rsplit("/", 1)[-1] else (tag, "", "latest")
        with open(archive, "rb") as data:
            client.api.import_image_from_data(data, repository=repo, tag=version,
                                              changes=['ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
                                                       'ENV LANG=C.UTF-8', 'CMD ["bash"]',
                                                       f'LABEL {BOOTSTRAP_LABEL}="{BOOTSTRAP_PACKAGES}"'])
    image = client.images.get(tag)
    progress(f"{tag} ready ({image.short_id})")
    return image.id, True


def _reap(container: str) -> None:
    """Watchdog: wait until the pipe from the episode closes (its end, or its death), then remove the container."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # only the pipe closing ends the watch
    with contextlib.suppress(OSError):
        while sys.stdin.buffer.read(4096):
            pass
    with contextlib.suppress(Exception):
        # in the watchdog process, once the pipe closed; a failure here, this import's included, is swallowed
        import docker

        docker.from_env().containers.get(container).remove(force=True, v=True)


__all__ = ["BASE_IMAGE_VAR", "DEFAULT_BASE_IMAGE", "LABEL_EPISODE", "LABEL_OWNER", "base_image_name",
           "bootstrap_base_image", "connect", "engine_address", "find_mirror", "owner_label", "remove_stale_containers"]


if __name__ == "__main__":
    if sys.argv[1:2] == ["--reap"]:
        _reap(sys.argv[2])
