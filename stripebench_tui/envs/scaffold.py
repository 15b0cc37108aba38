"""``stripebench envs new``: lay out a new environment that ``stripebench validate`` passes as generated.

Without a source it writes the skeleton kept beside this module (``envs/skeleton/``: a Flask members API whose
oracle creates a Stripe customer through the official SDK, a grader that reads it back, one mutant); with one it
copies that environment under the new id. Either way two places get files: ``<environments>/<id>/`` and
``<graders>/<id_with_underscores>.py``. Nothing that exists is overwritten.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from stripebench_tui.envs.manifest import (
    ID_PATTERN,
    MANIFEST,
    Environment,
    bundled_dir,
    environments_dir,
    load_manifest_environment,
)
from stripebench_tui.errors import UserError

SKELETON = Path(__file__).resolve().parent / "skeleton"
SUFFIX = ".tmpl"
PLACEHOLDER = "__ENV_ID__"
GRADER_TEMPLATE = "grader.py" + SUFFIX
# What a copied environment leaves behind: caches and venvs its runs made, never part of the task.
NOT_COPIED = shutil.ignore_patterns("__pycache__", "*.pyc", ".venv", "node_modules", ".pytest_cache")


@dataclass(frozen=True)
class Targets:
    """Where a new environment's two parts go; ``found`` when stripebench looks there already (no variables)."""

    environments: Path
    graders: Path
    found: bool = False


@dataclass(frozen=True)
class Made:
    """What ``new_environment`` wrote."""

    env_id: str
    env_dir: Path
    grader: Path | None
    files: tuple[Path, ...]
    targets: Targets

    def next_command(self) -> str:
        prefix = "" if self.targets.found else (
            f"STRIPEBENCH_ENVIRONMENTS={self.targets.environments} STRIPEBENCH_GRADERS={self.targets.graders} ")
        return f"{prefix}stripebench validate {self.env_id}"


def grader_module(env_id: str) -> str:
    return env_id.replace("-", "_")


def targets_for(directory: Path | None, graders: Path) -> Targets:
    """``directory``/environments and ``directory``/graders; without one, where stripebench looks for them (the
    checkout's, or $STRIPEBENCH_ENVIRONMENTS, and ``graders``: grading.loader.graders_dir()). The copies inside an
    installed wheel are never written to: there, --dir is needed."""
    envs = environments_dir()
    if directory is not None:
        mine = Targets(directory / "environments", directory / "graders")
        return Targets(mine.environments, mine.graders, found=mine.environments.resolve() == envs.resolve()
                       and mine.graders.resolve() == graders.resolve())
    for where, name in ((envs, "environments"), (graders, "graders")):
        if "bundled" in where.parts and where.resolve() == bundled_dir(name).resolve():
            raise UserError(f"no checkout around stripebench (its {name} are the installed package's); "
                            "pass --dir DIR to write DIR/environments and DIR/graders")
    return Targets(envs, graders, found=True)


def check_new_id(env_id: str, targets: Targets) -> None:
    """UserError unless ``env_id`` is a valid id that names nothing yet in ``targets``."""
    if not ID_PATTERN.match(env_id):
        raise UserError(f"{env_id!r} is not a valid environment id: use 2-49 lower-case letters, digits and dashes, "
                        "starting with a letter (e.g. demo-task)")
    if (targets.environments / env_id).exists():
        raise UserError(f"{targets.environments / env_id} already exists; choose another name (nothing was written)")
    grader = targets.graders / f"{grader_module(env_id)}.py"
    if grader.exists():
        raise UserError(f"{grader} already exists; choose another name (nothing was written)")


def new_environment(env_id: str, targets: Targets, source: Environment | None = None,
                    source_grader: Path | None = None) -> Made:
    """Write the skeleton (or a copy of ``source`` and its grader module ``source_grader``) as ``env_id``; the
    result loads as an environment."""
    check_new_id(env_id, targets)
    if source is not None and not (source.root / MANIFEST).is_file():
        raise UserError(f"{source.id}: only environments with an {MANIFEST} can be copied (a published benchmark "
                        "folder is run as it is)")
    env_dir = targets.environments / env_id
    grader = targets.graders / f"{grader_module(env_id)}.py"
    targets.environments.mkdir(parents=True, exist_ok=True)
    targets.graders.mkdir(parents=True, exist_ok=True)
    try:
        if source is None:
            written_grader: Path | None = grader
            _write_skeleton(env_id, env_dir, grader)
        else:
            written_grader = _copy_environment(source, source_grader, env_id, env_dir, grader)
        load_manifest_environment(env_dir)  # what was written must load; a bug here is ours, not the user's
    except BaseException:
        shutil.rmtree(env_dir, ignore_errors=True)
        grader.unlink(missing_ok=True)
        raise
    files = sorted(p for p in env_dir.rglob("*") if p.is_file())
    return Made(env_id, env_dir, written_grader, tuple(files), targets)


def _write_skeleton(env_id: str, env_dir: Path, grader: Path) -> None:
    for template in sorted(SKELETON.rglob("*" + SUFFIX)):
        text = template.read_text(encoding="utf-8").replace(PLACEHOLDER, env_id)
        relative = template.relative_to(SKELETON)
        dest = grader if relative.as_posix() == GRADER_TEMPLATE else env_dir / relative.as_posix()[: -len(SUFFIX)]
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(text, encoding="utf-8")


def _copy_environment(source: Environment, source_grader: Path | None, env_id: str, env_dir: Path,
                      grader: Path) -> Path | None:
    """Copy ``source`` as ``env_id``: its directory, its grader module with the source's id rewritten in it, and
    the id and grader names in its manifest."""
    shutil.copytree(source.root, env_dir, ignore=NOT_COPIED)
    manifest = env_dir / MANIFEST
    text = manifest.read_text(encoding="utf-8")
    text, ids = re.subn(r'^id\s*=\s*"[^"]*"', f'id = "{env_id}"', text, count=1, flags=re.MULTILINE)
    if not ids:
        raise UserError(f"{source.root / MANIFEST}: no id line to rewrite")
    # An explicit grader name would still point at the source's module: the copy names its own.
    text = re.sub(r'^grader\s*=\s*"[^"]*"', f'grader = "{grader_module(env_id)}"', text, count=1, flags=re.MULTILINE)
    manifest.write_text(text, encoding="utf-8")
    if source_grader is None or not source_grader.is_file():
        return None
    # Graders name their environment (the path to its seed module, keys of their runs): those now mean the copy.
    text = re.sub(rf"(?<![A-Za-z0-9_-]){re.escape(source.id)}(?![A-Za-z0-9_-])", env_id,
                  source_grader.read_text(encoding="utf-8"))
    grader.write_text(text, encoding="utf-8")
    return grader


__all__ = ["Made", "Targets", "check_new_id", "grader_module", "new_environment", "targets_for"]
