"""Installing external harnesses into the stripebench cache at pinned versions, and telling which version is installed.

npm harnesses (Claude Code, Codex CLI) go into ``<cache>/<name>-<version>/node_modules``;
Python harnesses (mini-swe-agent) into a virtualenv of their own, ``<cache>/<name>-<version>``,
so their dependencies (litellm, …) never mix with ours or the user's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs

from stripebench_tui.errors import UserError
from stripebench_tui.shared_cache import ensure_entry, is_complete

# How a command is run (``subprocess.run``; tests pass a recorder).
Runner = Callable[..., "subprocess.CompletedProcess[Any]"]

VERSION_TIMEOUT = 30.0  # seconds a harness gets to print its version


def harness_cache() -> Path:
    """Where ``stripebench agents install`` puts harnesses ($STRIPEBENCH_HARNESSES, else the user cache)."""
    override = os.environ.get("STRIPEBENCH_HARNESSES")
    if override:
        return Path(override)
    return Path(platformdirs.user_cache_dir("stripebench")) / "harnesses"


@dataclass(frozen=True)
class Install:
    """How our installer puts one harness in the cache: package manager, package, pinned version."""

    name: str  # the harness (agent) name
    manager: str  # "npm" | "pip"
    package: str
    version: str

    @property
    def prefix(self) -> Path:
        return harness_cache() / f"{self.name}-{self.version}"

    @property
    def bin_dir(self) -> Path:
        """Where the installed executables are."""
        return self.prefix / "node_modules" / ".bin" if self.manager == "npm" else self.prefix / "bin"

    def installed_dirs(self) -> list[Path]:
        """``[bin_dir]`` once an install of ours completed there, else ``[]`` (an interrupted one does not count)."""
        return [self.bin_dir] if is_complete(self.prefix) else []

    @property
    def spec(self) -> str:
        return f"{self.package}@{self.version}" if self.manager == "npm" else f"{self.package}=={self.version}"

    @property
    def hint(self) -> str:
        """One line: how to install it."""
        where = "the stripebench cache" if self.manager == "npm" else "a virtualenv in the stripebench cache"
        return f"run `stripebench agents install {self.name}` ({self.manager} install of {self.spec} into {where})"


def _last_line(done: subprocess.CompletedProcess[Any]) -> str:
    lines = (done.stderr or done.stdout or "").strip().splitlines()
    return lines[-1] if lines else "no output"


def install(spec: Install, run: Runner = subprocess.run) -> Path:
    """Install ``spec`` into its cache prefix with its package manager; returns the prefix.

    The prefix is a ``shared_cache`` entry: one install of it at a time across processes (two episodes or tests
    may start the same harness at once; the others wait, then find it done), made in place (a virtualenv names
    its own path) and complete only once marked, so what an interrupted install left is removed and made again.
    """
    def build(prefix: Path) -> None:
        prefix.mkdir(parents=True, exist_ok=True)
        if spec.manager == "npm":
            _npm_install(spec, prefix, run)
        else:
            _pip_install(spec, prefix, run)

    return ensure_entry(spec.prefix, build, in_place=True)


def _npm_install(spec: Install, prefix: Path, run: Runner) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise UserError(f"installing {spec.name} needs npm: install Node.js and npm (Debian: apt-get install nodejs npm)")
    done = run([npm, "install", "--no-audit", "--no-fund", "--prefix", str(prefix), spec.spec],
               capture_output=True, text=True)
    if done.returncode != 0:
        raise UserError(f"npm install {spec.spec} failed: {_last_line(done)}")


def _pip_install(spec: Install, prefix: Path, run: Runner) -> None:
    made = run([sys.executable, "-m", "venv", "--clear", str(prefix)], capture_output=True, text=True)
    if made.returncode != 0:
        raise UserError(f"cannot make a virtualenv for {spec.name} in {prefix}: {_last_line(made)}")
    done = run([str(prefix / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check", "--no-input",
                spec.spec], capture_output=True, text=True)
    if done.returncode != 0:
        raise UserError(f"pip install {spec.spec} failed: {_last_line(done)}")


def _script_python(path: str) -> str | None:
    """The interpreter named by a console script's ``#!`` line (pip writes one per script)."""
    try:
        with open(path, "rb") as script:
            first = script.readline(400).decode("utf-8", "replace").strip()
    except OSError:
        return None
    if not first.startswith("#!"):
        return None
    interpreter = first[2:].strip().split(" ")[0]
    return interpreter if os.access(interpreter, os.X_OK) else None


def installed_version(executable: str, spec: Install | None) -> str:
    """The version of the harness at ``executable`` ("unknown version" when it does not say)."""
    if spec is not None and spec.manager == "pip":
        # A Python harness may have no --version (mini-swe-agent has none): ask its own interpreter for the metadata.
        python = _script_python(executable)
        argv = [python, "-c", f"from importlib.metadata import version; print(version({spec.package!r}))"] if python else []
    else:
        argv = [executable, "--version"]
    if not argv:
        return "unknown version"
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=VERSION_TIMEOUT, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown version"
    words = done.stdout.strip().split()
    # "2.1.332 (Claude Code)", "codex-cli 0.171.0", "2.4.6": the first word with a digit that looks like a version
    found = next((w for w in words if w[:1].isdigit() and "." in w), "")
    return found if done.returncode == 0 and found else "unknown version"


__all__ = ["Install", "harness_cache", "install", "installed_version"]
