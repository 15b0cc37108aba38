"""Environments' commands say `python …`: every episode process finds one, also on a machine with only python3."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from stripebench_tui.envs.catalog import find_environment
from stripebench_tui.runtime.local import LocalSandbox


@pytest.fixture
def bare_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """PATH as on a fresh Debian machine: system folders only (no version manager shims, no `python`)."""
    monkeypatch.setenv("STRIPEBENCH_CACHE", str(tmp_path / "cache"))
    bare = tmp_path / "bin"
    bare.mkdir()
    for tool in ("bash", "env", "cat"):
        (bare / tool).symlink_to(subprocess.check_output(["bash", "-c", f"command -v {tool}"], text=True).strip())
    monkeypatch.setenv("PATH", str(bare))
    return bare


def _python_prefix(env: dict[str, str], cwd: Path) -> str:
    done = subprocess.run(["bash", "-c", "python -c 'import sys; print(sys.prefix)'"], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_an_episode_process_finds_python_where_the_machine_has_none(bare_machine: Path, tmp_path: Path) -> None:
    """It is this interpreter, virtualenv included (its prefix, so its packages: a link to a venv's python is not)."""
    env = LocalSandbox(find_environment("tiny-shop"), tmp_path / "ep", {}).process_env()
    assert _python_prefix(env, tmp_path) == sys.prefix


def test_a_python_the_machine_has_comes_first(bare_machine: Path, tmp_path: Path) -> None:
    own = tmp_path / "own"
    own.mkdir()
    (own / "python").write_text('#!/bin/sh\necho "the machine python"\n')
    (own / "python").chmod(0o755)
    os.environ["PATH"] = f"{own}{os.pathsep}{os.environ['PATH']}"
    env = LocalSandbox(find_environment("tiny-shop"), tmp_path / "ep", {}).process_env()
    assert _python_prefix(env, tmp_path) == "the machine python"
