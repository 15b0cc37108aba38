"""An environment's starting workspace, as an episode gets it: the environment's own files plus the shared ones
its manifest names (``shared``, from ``stripebench_tui/envs/shared/``).

The shared files are copied, not imported: the app's services run with the environment's own python (its cached
venv, a ``.venv`` of the app, a Docker image) where stripebench is not installed, and the agent reads and runs the
workspace as a self-contained project.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from stripebench_tui.envs.manifest import SHARED_DIR, Environment


def copy_workspace(env: Environment, dest: Path) -> None:
    """Copy ``env``'s workspace to ``dest`` (which must not exist), then its shared files into it."""
    if env.workspace.is_dir():
        shutil.copytree(env.workspace, dest, symlinks=True)
    else:
        dest.mkdir()
    for name in env.manifest.shared:
        shutil.copy2(SHARED_DIR / name, dest / name)


__all__ = ["copy_workspace"]
