"""An app's npm packages with pnpm, cached between episodes: the first install fetches, later ones link.

``python -m stripebench_tui.runtime.node_packages install --dir WORKSPACE`` runs a pinned pnpm (installed once
into stripebench's cache with npm; nothing global) with its content-addressed store in stripebench's cache: a later episode's
``node_modules`` is hard links into that store, made in seconds and without the registry. A folder that ships
no lockfile gets the one the first install resolved, cached by the hash of its ``package.json``, so every
episode of it installs the same versions. Progress lines go to stdout; a failure is one line naming the cause
and the fix (exit 2): the registry unreachable, a broken lockfile or ``package.json``, Node missing. A lockfile
is cached only after an install succeeded, so a failed run leaves nothing a later one trips over.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable, Mapping
from pathlib import Path

from stripebench_tui.envs.deps import cache_root, with_bin_first
from stripebench_tui.runtime import node_binary
from stripebench_tui.runtime.node_binary import NodeRefused
from stripebench_tui.shared_cache import ensure_entry, is_complete, publish_file

PNPM_VERSION = "9.15.9"  # pinned: the same resolver and lockfile format on every machine
PNPM = f"pnpm@{PNPM_VERSION}"
LOCKFILE = "pnpm-lock.yaml"
INSTALL_TIMEOUT = 900.0

# What pnpm's and npm's output says, and the one line we answer with.
_CAUSES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"ERR_PNPM_(BROKEN_LOCKFILE|LOCKFILE_BREAKING_CHANGE)|lockfile.*(broken|invalid|not valid)", re.I),
     f"{LOCKFILE} is broken: fix it, or delete it and the next install resolves a new one"),
    (re.compile(r"ERR_PNPM_OUTDATED_LOCKFILE|lockfile.*not up to date", re.I),
     f"{LOCKFILE} does not match package.json: delete it (a new one is resolved) or run `pnpm install` to update it"),
    (re.compile(r"ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ECONNRESET|ERR_PNPM_META_FETCH_FAIL|"
                r"ERR_PNPM_FETCH_|network|socket hang up|request to https?://\S+ failed", re.I),
     "the npm registry is unreachable: check the network, or point npm_config_registry at a reachable mirror"),
    (re.compile(r"ERR_PNPM_NO_MATCHING_VERSION|ERR_PNPM_FETCH_404|E404|No matching version", re.I),
     "a package or version in package.json does not exist on the registry: correct package.json"),
    (re.compile(r"ERR_PNPM_JSON_PARSE|Unexpected token .* in JSON|JSONError", re.I),
     "package.json is not valid JSON: correct it"),
)


class InstallProblem(Exception):
    """Why the packages could not be installed, with the fix (one line)."""


def store_dir() -> Path:
    return cache_root() / "node" / "pnpm-store"


def shim_dir() -> Path:
    """A directory holding ``pnpm``: the pinned version from the cache (the Dockerfile installs it globally)."""
    return cache_root() / "node" / "bin"


def pnpm_home() -> Path:
    """The pinned pnpm's cache entry (``shared_cache``: complete only once marked)."""
    return cache_root() / "node" / PNPM


def pnpm_script() -> Path:
    return pnpm_home() / "node_modules" / "pnpm" / "bin" / "pnpm.cjs"


def ensure_pnpm(say: Callable[[str], None] = print) -> Path:
    """The pinned pnpm in the cache, installed with npm the first time; later calls need no registry.
    InstallProblem on failure."""
    script = pnpm_script()
    if not is_complete(pnpm_home()):
        _npm_install_once(PNPM, pnpm_home(), script.relative_to(pnpm_home()), say)
    return script


def _npm_install_once(package: str, home: Path, made: Path, say: Callable[[str], None]) -> None:
    """``npm install package`` into the shared cache entry ``home``, one process at a time, staged beside it and
    moved in place only once it holds ``made`` (a path relative to it), so a failed or killed install leaves
    nothing a later one takes for done. InstallProblem on failure."""
    if shutil.which("npm") is None:
        raise InstallProblem("npm not found: apt-get install nodejs npm")

    def build(staging: Path) -> None:
        say(f"installing {package} into {home} (once)")
        staging.mkdir(parents=True)
        out = subprocess.run(["npm", "install", "--no-save", "--no-audit", "--no-fund", "--prefix", str(staging), package],
                             capture_output=True, text=True, timeout=INSTALL_TIMEOUT, stdin=subprocess.DEVNULL)
        if out.returncode != 0:
            raise InstallProblem(explain(out.stdout + out.stderr, out.returncode).replace("pnpm install",
                                                                                          f"npm install {package}"))
        if not (staging / made).is_file():
            raise InstallProblem(f"npm install {package} made no {made}")

    ensure_entry(home, build, on_wait=lambda: say(f"waiting for another run that is installing {package}"))


def ensure_shim() -> Path:
    """Write the ``pnpm`` shim (once; atomically) and return its directory."""
    shim = shim_dir() / "pnpm"
    text = f'#!/bin/sh\n# stripebench: the pnpm episodes use, with its store\nexec node "{pnpm_script()}" "$@"\n'
    if not shim.is_file() or shim.read_text() != text:
        publish_file(shim, text.encode(), mode=0o755)
    return shim.parent


def _major(version: str | None) -> int:
    found = re.search(r"\d+", version or "")
    return int(found.group()) if found else 0


def node_bin(min_node: int | None) -> Path | None:
    """The bin directory to put first on PATH: None when this machine's Node is new enough (or none is asked).
    InstallProblem when no Node that new is pinned (``node_binary.PINS``)."""
    if min_node is None or _major(node_version()) >= min_node:
        return None
    try:
        return node_binary.home(node_binary.pin_for(min_node)) / "bin"
    except NodeRefused as exc:
        raise InstallProblem(str(exc)) from None


def ensure_node(min_node: int | None, say: Callable[[str], None] = print,
                fetch: node_binary.Fetcher = node_binary.npm_pack) -> Path | None:
    """``node_bin``, fetched the first time from the npm registry at its pinned version and hash
    (``node_binary``), its version checked before each use. InstallProblem on failure."""
    if node_bin(min_node) is None:
        return None
    assert min_node is not None
    pin = node_binary.pin_for(min_node)
    if not node_binary.is_installed(pin):
        say(f"this machine's Node.js is {node_version() or 'missing'}; the app needs {min_node}: installing {pin.spec} (once)")
    try:
        return node_binary.ensure(pin, say, fetch)
    except NodeRefused as exc:
        raise InstallProblem(str(exc)) from None


def process_env(env: Mapping[str, str], hoist: str = "", min_node: int | None = None) -> dict[str, str]:
    """What every process of an episode with npm packages gets: ``pnpm`` (and the Node the app needs) first on PATH,
    the cached store and the install's hoisting (else pnpm refuses the node_modules the install made), and no
    telemetry calls."""
    path = env.get("PATH")
    try:
        newer = node_bin(min_node)
    except InstallProblem:  # no pinned Node that new: the install step has said so, in one line
        newer = None
    if newer is not None:
        path = with_bin_first(newer, path)
    out = {"PATH": with_bin_first(shim_dir(), path), "npm_config_store_dir": str(store_dir()),
           "npm_config_update_notifier": "false", "NEXT_TELEMETRY_DISABLED": "1"}
    if hoist:
        out["npm_config_public_hoist_pattern"] = hoist
    return out


def _lock_cache(package_json: bytes) -> Path:
    return cache_root() / "node" / "locks" / f"{hashlib.sha256(package_json).hexdigest()[:20]}.yaml"


def explain(output: str, code: int) -> str:
    """The one line for a failed install: the first known cause in pnpm's output, else its last line."""
    for pattern, cause in _CAUSES:
        if pattern.search(output):
            return cause
    last = next((ln.strip() for ln in reversed(output.splitlines()) if ln.strip()), "no output")
    return f"pnpm install exited with code {code}: {last}"


@functools.cache
def node_version() -> str | None:
    """This machine's ``node --version`` (e.g. "v20.19.2"), or None when Node is not on PATH (asked once)."""
    node = shutil.which("node")
    if node is None:
        return None
    try:
        return subprocess.run([node, "--version"], capture_output=True, text=True, timeout=20).stdout.strip() or None
    except (OSError, subprocess.TimeoutExpired):
        return None


def describe(min_node: int | None = None) -> tuple[bool, str]:
    """For ``doctor`` and ``envs --path``: whether Node and npm are here, and what the cache holds."""
    version = node_version()
    if version is None or shutil.which("npm") is None:
        return False, "Node.js with npm not found: apt-get install nodejs npm (Node 18.18 or newer)"
    if _major(version) < 18:
        return False, f"Node.js {version} is too old for Next.js 15: install Node 18.18 or newer"
    store = store_dir()
    cached = "cached packages in " + str(store) if store.is_dir() else "no packages cached yet (the first install fetches them)"
    tool = f"{PNPM} cached" if is_complete(pnpm_home()) else f"{PNPM} installed on first use"
    try:
        newer = node_bin(min_node)
    except InstallProblem as exc:
        return False, f"Node.js {version}: {exc}"
    if newer is not None:
        assert min_node is not None
        pin = node_binary.pin_for(min_node)
        where = "cached" if node_binary.is_installed(pin) else "installed from the npm registry on first use"
        version = f"{version} (the app needs {min_node}: {pin.spec}, {where})"
    return True, f"Node.js {version}, {tool}; {cached}"


def install(workspace: Path, say: Callable[[str], None] = print, *, frozen: bool | None = None, hoist: str = "",
            min_node: int | None = None) -> float:
    """Install ``workspace``'s packages (see the module docstring); the seconds it took. InstallProblem on failure."""
    package = workspace / "package.json"
    if not package.is_file():
        raise InstallProblem(f"{workspace} has no package.json: nothing to install")
    raw = package.read_bytes()
    try:
        json.loads(raw)
    except ValueError as exc:
        raise InstallProblem(f"{package} is not valid JSON ({exc}): correct it") from None
    ensure_node(min_node, say)
    pnpm = ensure_pnpm(say)
    ensure_shim()
    lock = workspace / LOCKFILE
    cached_lock = _lock_cache(raw)
    own_lock = lock.is_file()
    if not own_lock and cached_lock.is_file():
        shutil.copyfile(cached_lock, lock)
        say(f"using the {LOCKFILE} resolved by an earlier install of this package.json")
    env = {**os.environ, **process_env(os.environ, hoist, min_node), "CI": "1"}
    argv = [shutil.which("node", path=env["PATH"]) or "node", str(pnpm), "install", "--store-dir", str(store_dir()),
            "--prefer-offline",
            "--reporter=append-only", "--config.confirmModulesPurge=false"]
    if frozen if frozen is not None else lock.is_file():
        argv.append("--frozen-lockfile")
    say(f"{PNPM} install in {workspace} (store {store_dir()})")
    started = time.monotonic()
    tail: deque[str] = deque(maxlen=200)
    try:
        proc = subprocess.Popen(argv, cwd=workspace, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, env=env, text=True, errors="replace")
    except OSError as exc:
        raise InstallProblem(f"cannot start node: {exc}") from None
    assert proc.stdout is not None
    for line in proc.stdout:
        line = line.rstrip()
        tail.append(line)
        if line:
            say(line)
    try:
        code = proc.wait(timeout=INSTALL_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise InstallProblem(f"pnpm install took over {INSTALL_TIMEOUT:g} s: is the registry very slow?") from None
    if code != 0:
        if not own_lock and lock.is_file() and not cached_lock.is_file():
            lock.unlink()  # a half-resolved lockfile must not look like the folder's own
        raise InstallProblem(explain("\n".join(tail), code))
    if not own_lock and lock.is_file() and not cached_lock.is_file():
        publish_file(cached_lock, lock.read_bytes())
    took = time.monotonic() - started
    say(f"packages installed in {took:.1f} s")
    return took


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m stripebench_tui.runtime.node_packages",
        description=f"Install an app's npm packages with {PNPM}, its store cached between episodes.")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("install", help="install the packages of the app in --dir")
    run.add_argument("--dir", type=Path, default=Path("."), help="the app's directory (holding package.json)")
    run.add_argument("--public-hoist-pattern", default="", help="a package to link into node_modules/.bin too (e.g. tsx)")
    args = parser.parse_args(argv)

    def say(text: str) -> None:
        print(f"packages: {text}", flush=True)

    try:
        install(args.dir.resolve(), say, hoist=args.public_hoist_pattern)
    except InstallProblem as exc:
        print(f"packages: {exc}", file=sys.stderr, flush=True)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
