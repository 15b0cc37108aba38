"""Where an environment's app dependencies live: its requirements file and the cached virtualenv made from it.

An environment declares what its app needs with the manifest's ``requirements`` (a pip requirements file in the
environment directory; by default ``workspace/requirements.txt`` when there is one). Episodes on this machine run
the app, the seed script, setup commands and the agent's shell with a virtualenv holding exactly those packages
first on PATH. The virtualenv is cached, one per environment, keyed by a hash of the requirements and the Python
that runs stripebench, under ``$STRIPEBENCH_CACHE`` or the user's cache directory::

    <cache>/envs/<env id>/<key>            symlink to the built venv (present only once it is complete)
    <cache>/envs/<env id>/venv-<key>-<rnd>  the venv itself
    <cache>/envs/<env id>/<key>.pip.log     pip's output of the last build
    <cache>/envs/<env id>/<key>.failed.json why the last build failed (removed by a successful one)

This module only finds and reads that layout (no processes): ``runtime.envdeps`` builds it.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from stripebench_tui.core.user_cache import CACHE_VAR, cache_root
from stripebench_tui.envs.manifest import Environment

LAYOUT = "envdeps-1"  # bump when the way venvs are built changes, so old ones are not reused
MARKER = "stripebench-envdeps.json"  # written into a venv once it is complete


def requirements_file(env: Environment) -> Path | None:
    """The environment's requirements file: the manifest's ``requirements`` (``""``: none), else the workspace's."""
    declared = env.manifest.requirements
    if declared is not None:
        return env.path(declared) if declared else None
    default = env.workspace / "requirements.txt"
    return default if default.is_file() else None


def python_identity() -> str:
    """What a venv depends on besides its requirements: the interpreter that makes it."""
    return f"{platform.python_implementation()} {sys.version} {sys.base_prefix} {platform.machine()}"


@dataclass(frozen=True)
class EnvDeps:
    """The cached virtualenv of one environment's requirements (see the module docstring)."""

    env_id: str
    requirements: Path
    key: str
    home: Path

    @property
    def link(self) -> Path:
        """The stable path of the venv (a symlink made only once the build completed)."""
        return self.home / self.key

    @property
    def bin_dir(self) -> Path:
        """What goes first on PATH (python, python3 and the packages' scripts)."""
        return self.link / "bin"

    @property
    def python(self) -> Path:
        return self.bin_dir / "python"

    @property
    def log_path(self) -> Path:
        return self.home / f"{self.key}.pip.log"

    @property
    def failure_path(self) -> Path:
        return self.home / f"{self.key}.failed.json"

    @property
    def lock_path(self) -> Path:
        return self.home / ".lock"

    def ready(self) -> bool:
        """Whether the venv is built and complete."""
        return (self.link / MARKER).is_file()

    def last_failure(self) -> str:
        """Why the last build of these requirements failed ("" if it did not, or was never tried)."""
        try:
            return str(json.loads(self.failure_path.read_text(encoding="utf-8")).get("reason", "")) or "unknown"
        except FileNotFoundError:
            return ""
        except (OSError, ValueError):
            return f"unknown (unreadable {self.failure_path})"

    def describe(self) -> tuple[bool, str]:
        """(ok, one line) on the state of this venv, for ``stripebench doctor``."""
        if self.ready():
            return True, f"{self.env_id}: dependencies ready ({self.link.resolve()})"
        failure = self.last_failure()
        if failure:
            return False, f"{self.env_id}: the last build of its dependencies failed: {failure}"
        return True, f"{self.env_id}: dependencies ({self.requirements}) will be installed on its first run"


def dependency_key(requirements: Path) -> str:
    """The cache key of a requirements file's venv: its content, the interpreter and our layout."""
    digest = hashlib.sha256()
    digest.update(f"{LAYOUT}\n{python_identity()}\n".encode())
    digest.update(requirements.read_bytes())
    return digest.hexdigest()[:16]


def dependencies(env: Environment, root: Path | None = None) -> EnvDeps | None:
    """The environment's cached venv (built or not), or None when it declares no requirements."""
    req = requirements_file(env)
    if req is None:
        return None
    home = (root or cache_root()) / "envs" / env.id
    return EnvDeps(env_id=env.id, requirements=req, key=dependency_key(req), home=home)


def with_bin_first(bin_dir: Path, path: str | None) -> str:
    """``PATH`` with ``bin_dir`` in front."""
    return os.pathsep.join([str(bin_dir), *([path] if path else [])])


def python_fallback_dir(root: Path | None = None) -> Path:
    """A folder holding ``python`` and ``python3`` commands that run this interpreter (made on first use).

    Environments' commands say ``python app.py``; a machine whose Python is Debian's has no ``python`` (only
    ``python3``, unless python-is-python3 is installed), and one with a version manager has it only as a shim. Put
    last on PATH (``with_python_last``), it answers only where nothing else does. Scripts, not symbolic links: a
    virtualenv's interpreter reached through a link elsewhere would not find its ``pyvenv.cfg`` (nor its packages)."""
    exe = sys.executable
    folder = (root or cache_root()) / "python" / hashlib.sha256(exe.encode()).hexdigest()[:16]
    script = f"#!/bin/sh\nexec {shlex.quote(exe)} \"$@\"\n"
    if not all((folder / name).is_file() for name in ("python", "python3")):
        folder.mkdir(parents=True, exist_ok=True)
        for name in ("python", "python3"):
            staged = folder / f".{name}.{os.getpid()}"
            staged.write_text(script, encoding="utf-8")
            staged.chmod(0o755)
            os.replace(staged, folder / name)  # atomic: another episode may be making the same command
    return folder


def with_python_last(path: str | None, root: Path | None = None) -> str:
    """``PATH`` with ``python_fallback_dir()`` at its end."""
    return os.pathsep.join([*([path] if path else []), str(python_fallback_dir(root))])


__all__ = ["CACHE_VAR", "EnvDeps", "MARKER", "cache_root", "dependencies", "dependency_key", "python_fallback_dir",
           "requirements_file", "with_bin_first", "with_python_last"]
