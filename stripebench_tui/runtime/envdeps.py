"""Building an environment's cached virtualenv (the layout is in ``envs.deps``).

``ensure_venv`` returns the venv of an environment's requirements, building it on first use:

* one build at a time per environment across processes (``shared_cache.locked_async``; a second episode waits, then
  reuses what the first built);
* built in a fresh directory of its own and published by atomically replacing a symlink, so an interrupted or
  failed build never leaves anything a later run would take for a venv (its directory is removed, and any left by
  a killed process is swept by the next build);
* the venv has no pip of its own (the agent's ``pip install`` cannot change the shared cache): packages are
  installed by this interpreter's pip aimed at it (``pip --python``; without pip 22.3 or later here, the venv gets
  its own pip instead);
* pip's output goes to ``<key>.pip.log`` in the cache (and to ``progress`` line by line); a failure is kept in
  ``<key>.failed.json`` for ``stripebench doctor`` and raised as one line naming the environment, the requirements
  file and the fix.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import os
import shutil
import signal
import sys
import uuid
import venv
from collections import deque
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

from stripebench_tui.envs.deps import CACHE_VAR, MARKER, EnvDeps
from stripebench_tui.errors import BadFileError, RuntimeProblem
from stripebench_tui.runtime.reaper import die_with_parent
from stripebench_tui.shared_cache import locked_async

INSTALL_TIMEOUT = 900.0
VENV_PREFIX = "venv-"
_SHOWN = ("Looking in", "Collecting", "Processing", "Downloading", "Installing", "Successfully", "ERROR",
          "Requirement already")
_BAD_FILE = ("Invalid requirement", "Could not open requirements file", "Invalid URL", "Invalid wheel filename")


class DependencyFailed(RuntimeProblem):
    """Installing an environment's requirements failed (the message is one line, with the fix and pip's log)."""


class BadRequirements(BadFileError):
    """pip could not read the requirements file itself."""


async def ensure_venv(deps: EnvDeps, progress: Callable[[str], None] = lambda _line: None,
                      log_copy: Path | None = None) -> Path:
    """The built venv of ``deps`` (its real directory), building it first when needed (see the module docstring).

    ``log_copy`` also receives pip's output (e.g. the episode's ``logs/deps.log``).
    """
    if deps.ready():
        return deps.link.resolve()
    try:
        deps.home.mkdir(parents=True, exist_ok=True)
        deps.lock_path.touch()
    except OSError as exc:
        raise DependencyFailed(f"environment {deps.env_id}: cannot use the dependency cache {deps.home} "
                               f"({exc.strerror or exc}); set {CACHE_VAR} to a writable directory") from None
    waiting = f"waiting for another run that is installing {deps.env_id}'s dependencies"
    async with locked_async(deps.lock_path, lambda: progress(waiting)):
        if deps.ready():  # another run built it while we waited
            progress(f"dependencies of {deps.env_id} are ready (built by another run)")
            return deps.link.resolve()
        _sweep(deps.home)
        return await _build(deps, progress, log_copy)


def _sweep(home: Path) -> None:
    """Remove what killed builds left (venv directories no link points to, dangling links); caller holds the lock."""
    used = set()
    for entry in home.iterdir():
        if entry.is_symlink():
            if entry.exists():
                used.add(entry.resolve().name)
            else:
                entry.unlink(missing_ok=True)
    for entry in home.iterdir():
        if entry.name.startswith((VENV_PREFIX, ".link-")) and entry.name not in used:
            if entry.is_symlink() or entry.is_file():
                entry.unlink(missing_ok=True)
            else:
                shutil.rmtree(entry, ignore_errors=True)


def _real_requirements(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8", errors="replace").splitlines()
            if line.strip() and not line.strip().startswith("#")]


async def _build(deps: EnvDeps, progress: Callable[[str], None], log_copy: Path | None) -> Path:
    target = deps.home / f"{VENV_PREFIX}{deps.key}-{uuid.uuid4().hex[:8]}"
    progress(f"installing {deps.env_id}'s dependencies from {deps.requirements} into {target} "
             "(first run with these requirements; later episodes reuse it)")
    own_pip = _pip_can_target()
    try:
        await asyncio.to_thread(venv.EnvBuilder(symlinks=True, with_pip=not own_pip).create, target)
        if _real_requirements(deps.requirements):
            installer = [sys.executable, "-m", "pip", "--python", str(target / "bin" / "python")] if own_pip \
                else [str(target / "bin" / "python"), "-m", "pip"]
            argv = [*installer, "install", "--disable-pip-version-check", "--no-input", "--progress-bar", "off",
                    "-r", str(deps.requirements)]
            code, tail = await _run_pip(argv, deps, progress, log_copy)
            if code != 0:
                raise _failure(deps, code, tail)
        else:
            deps.log_path.write_text("(no requirements to install)\n", encoding="utf-8")
        (target / MARKER).write_text(json.dumps({
            "env": deps.env_id, "key": deps.key, "requirements": str(deps.requirements),
            "python": sys.version, "built": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        }) + "\n", encoding="utf-8")
        tmp_link = deps.home / f".link-{uuid.uuid4().hex[:8]}"
        tmp_link.symlink_to(target.name)
        os.replace(tmp_link, deps.link)  # atomic: the venv appears complete or not at all
    except (DependencyFailed, BadRequirements) as exc:
        shutil.rmtree(target, ignore_errors=True)
        _record_failure(deps, str(exc))
        raise
    except Exception as exc:  # noqa: BLE001 - making the venv itself failed (disk full, permissions): one line
        shutil.rmtree(target, ignore_errors=True)
        failed = DependencyFailed(f"environment {deps.env_id}: making its venv in {target} failed: "
                                  f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}; "
                                  f"check the disk, or set {CACHE_VAR} to another directory")
        _record_failure(deps, str(failed))
        raise failed from None
    except BaseException:  # cancelled (the episode was stopped): leave nothing behind, record nothing
        shutil.rmtree(target, ignore_errors=True)
        raise
    deps.failure_path.unlink(missing_ok=True)
    _remove_older(deps)
    progress(f"dependencies of {deps.env_id} ready")
    return target


def _pip_can_target() -> bool:
    """Whether this interpreter's pip can install into another environment (``--python``, pip 22.3 and later)."""
    # Its installed metadata, not importlib.util.find_spec("pip"): looking pip up through the import system makes
    # setuptools' distutils shim stand down for the rest of the process, after which importing setuptools (the
    # emulator's Cython build does) fails.
    try:
        major, minor = (int(part) for part in metadata.version("pip").split(".")[:2])
    except (metadata.PackageNotFoundError, ValueError):
        return False
    return (major, minor) >= (22, 3)


def _remove_older(deps: EnvDeps) -> None:
    """Keep one venv per environment: drop the links (and venvs) of other keys."""
    for entry in deps.home.iterdir():
        if entry.is_symlink() and entry.name != deps.key and not entry.name.startswith("."):
            entry.unlink(missing_ok=True)
    _sweep(deps.home)


def _record_failure(deps: EnvDeps, reason: str) -> None:
    with contextlib.suppress(OSError):
        deps.failure_path.write_text(json.dumps({
            "reason": reason, "log": str(deps.log_path),
            "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        }) + "\n", encoding="utf-8")


def _failure(deps: EnvDeps, code: int, tail: deque[str]) -> Exception:
    lines = [line.strip() for line in tail if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR")]
    said = (errors[0] if errors else (lines[-1] if lines else f"pip exited with code {code}"))[:300]
    where = f"environment {deps.env_id}: installing its requirements ({deps.requirements}) failed: {said}"
    if any(marker in line for line in lines for marker in _BAD_FILE):
        return BadRequirements(f"{where}; fix that line of the requirements file (pip's log: {deps.log_path})")
    return DependencyFailed(f"{where}; fix the requirement (or pip's index/network settings) and run again "
                            f"(pip's log: {deps.log_path})")


async def _run_pip(argv: list[str], deps: EnvDeps, progress: Callable[[str], None],
                   log_copy: Path | None) -> tuple[int, deque[str]]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_REQUIRE_VIRTUALENV")}
    env["PYTHONUNBUFFERED"] = "1"
    tail: deque[str] = deque(maxlen=40)
    logs = [open(deps.log_path, "wb")]
    if log_copy is not None:
        logs.append(open(log_copy, "ab"))
    proc = await asyncio.create_subprocess_exec(
        *argv, cwd=str(deps.requirements.parent), env=env, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, start_new_session=True,
        preexec_fn=die_with_parent)
    try:
        assert proc.stdout is not None
        async with asyncio.timeout(INSTALL_TIMEOUT):
            async for raw in proc.stdout:
                for log in logs:
                    log.write(raw)
                    log.flush()
                line = raw.decode("utf-8", "replace").rstrip()
                tail.append(line)
                if line.lstrip().startswith(_SHOWN):
                    progress(line.strip().split(" (from ", 1)[0])
            code = await proc.wait()
    except TimeoutError:
        tail.append(f"ERROR: pip did not finish within {INSTALL_TIMEOUT:g} s")
        code = -1
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(Exception):
                await asyncio.shield(proc.wait())
        for log in logs:
            log.close()
    return code, tail


__all__ = ["BadRequirements", "DependencyFailed", "ensure_venv"]
