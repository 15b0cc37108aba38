"""Finding and loading environments: ours by their manifest (``environment.toml``), a published benchmark folder
as it is (``benchfolder``), by id under the environments directory or by path."""

from __future__ import annotations

import os
from pathlib import Path

from stripebench_tui.envs.benchfolder import is_bench_folder, load_bench_environment
from stripebench_tui.envs.manifest import MANIFEST, Environment, environments_dir, load_manifest_environment
from stripebench_tui.errors import UserError


def load_environment(root: Path) -> Environment:
    """Load and check ``root/environment.toml``; BadFileError with file and field on any problem.

    A benchmark folder in the published layout (no manifest; see ``envs.benchfolder``) is read as it is.
    """
    if not (root / MANIFEST).is_file() and is_bench_folder(root):
        return load_bench_environment(root)
    return load_manifest_environment(root)


def list_environments(root: Path | None = None) -> list[Environment]:
    """Every environment under ``root`` (default: environments_dir()), sorted by id."""
    base = (root or environments_dir()).resolve()
    if not base.is_dir():
        return []
    return [load_environment(d) for d in sorted(base.iterdir()) if (d / MANIFEST).is_file()]


def find_environment(env_id: str, root: Path | None = None) -> Environment:
    """The environment named ``env_id``, or a path to an environment directory; UserError listing known ids."""
    as_path = Path(env_id).expanduser()
    if (as_path / MANIFEST).is_file():
        return load_environment(as_path.resolve())
    if as_path.is_dir() and (os.sep in env_id or env_id.startswith(".")):  # a path: a benchmark folder as it is
        return load_bench_environment(as_path)
    base = (root or environments_dir()).resolve()
    candidate = base / env_id
    if (candidate / MANIFEST).is_file():
        return load_environment(candidate)
    if as_path.is_dir():  # not one of ours: a benchmark folder (BadFileError says which part is missing)
        return load_bench_environment(as_path)
    known = ", ".join(e.name for e in sorted(base.iterdir()) if (e / MANIFEST).is_file()) if base.is_dir() else ""
    raise UserError(f"unknown environment {env_id!r}" + (f"; known: {known}" if known else f" (looked in {base})"))
