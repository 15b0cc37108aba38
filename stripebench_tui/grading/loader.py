"""Finding an environment's grader: ``graders/<module>.py`` defining ``GRADER`` or ``build()``."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

from stripebench_tui.envs.manifest import Environment, bundled_dir
from stripebench_tui.errors import BadFileError
from stripebench_tui.grading.criteria import Grader
from stripebench_tui.grading.external import ExternalGrader


def graders_dir() -> Path:
    """Where grader modules live: $STRIPEBENCH_GRADERS, else the checkout's graders/, else the bundled ones."""
    override = os.environ.get("STRIPEBENCH_GRADERS")
    if override:
        return Path(override)
    return bundled_dir("graders")


def grader_path(env: Environment, root: Path | None = None) -> Path:
    """The file ``env``'s grader would be in."""
    return (root or graders_dir()) / f"{env.manifest.grader_module}.py"


def load_grader(env: Environment, root: Path | None = None) -> Grader | None:
    """Import ``env``'s grader; None when it has no grader file, BadFileError when the file is broken.

    A benchmark folder's environment has an external grader (a command; see ``grading.external``) instead.
    """
    if getattr(env, "external_grader", None) is not None:
        return ExternalGrader.for_env(env)  # type: ignore[return-value]
    path = grader_path(env, root)
    if not path.is_file():
        return None
    name = f"stripebench_graders.{env.manifest.grader_module}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:  # pragma: no cover - only for paths without a .py loader
        raise BadFileError(f"{path}: cannot be imported")
    module = importlib.util.module_from_spec(spec)
    # Registered while it runs so dataclasses and pickling inside the grader resolve their module.
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
        grader = getattr(module, "GRADER", None)
        if grader is None and callable(getattr(module, "build", None)):
            grader = module.build()
    except Exception as exc:  # any failure in a grader file is a bad file, named in one line
        raise BadFileError(f"{path}: the grader failed to load: {type(exc).__name__}: {_first_line(exc)}") from exc
    finally:
        sys.modules.pop(name, None)
    if grader is None:
        raise BadFileError(f"{path}: defines neither GRADER nor build()")
    if not isinstance(grader, Grader):
        raise BadFileError(f"{path}: GRADER is a {type(grader).__name__}, not a stripebench_tui.grading.Grader")
    return grader


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else "(no message)"


__all__ = ["grader_path", "graders_dir", "load_grader"]
