"""An environment's starting workspace, as an episode gets it: the environment's own files plus the shared ones
its manifest names (``shared``, from ``stripebench_tui/envs/shared/``), less the paths it hides from the agent.

The shared files are copied, not imported: the app's services run with the environment's own python (its cached
venv, a ``.venv`` of the app, a Docker image) where stripebench is not installed, and the agent reads and runs the
workspace as a self-contained project.

A manifest's ``hidden`` paths (a published folder's server code, whose Dockerfile says the agent must not see it)
are left out of the agent's workspace, but for those ``visible`` names under them (the files the agent and the
server share). The services, setup commands, graders and the oracle work in the full workspace instead
(``full_workspace``): a directory beside the workspace laid out as the environment's is, where the hidden paths
are copies of the environment's files and everything else is a relative link into the agent's workspace, so what
either side writes at a shared path the other reads. A directory that holds hidden paths is a real directory of
the full workspace (its other entries linked one by one): what the agent adds to it later is not seen there.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from stripebench_tui.envs.manifest import SHARED_DIR, Environment

FULL_WORKSPACE = "full-workspace"  # the full workspace's name, beside the episode's workspace/
FULL_WORKSPACE_VAR = "FULL_WORKSPACE"  # the oracle plan's ${FULL_WORKSPACE}: its path (the workspace without hidden paths)


def _norm(path: str) -> str:
    return path.strip().strip("/")


class HiddenPaths:
    """A manifest's ``hidden`` and ``visible`` lists, as relative POSIX paths of the workspace."""

    def __init__(self, hidden: list[str], visible: list[str]) -> None:
        self.hidden = [p for p in map(_norm, hidden) if p]
        self.visible = [p for p in map(_norm, visible) if p]

    def __bool__(self) -> bool:
        return bool(self.hidden)

    def is_hidden(self, rel: str) -> bool:
        """Hidden from the agent: under a hidden path and not a visible one (nor under one)."""
        return _under(rel, self.hidden) and not _under(rel, self.visible)

    def is_visible(self, rel: str) -> bool:
        """A visible path under a hidden one (shared by the agent and the full workspace)."""
        return _under(rel, self.visible) and _under(rel, self.hidden)

    def holds(self, rel: str) -> bool:
        """A directory some hidden or visible path is inside of (the full workspace makes it a real directory)."""
        return any(p.startswith(rel + "/") for p in self.hidden + self.visible)


def _under(rel: str, paths: list[str]) -> bool:
    return any(rel == p or rel.startswith(p + "/") for p in paths)


def hidden_paths(env: Environment) -> HiddenPaths:
    return HiddenPaths(env.manifest.hidden, env.manifest.visible)


def full_workspace(env: Environment, workspace: Path) -> Path:
    """Where the services, setup, graders and oracle see ``workspace``: the full workspace beside it when the
    environment hides paths from the agent, else the workspace itself."""
    return workspace.parent / FULL_WORKSPACE if hidden_paths(env) else workspace


def services_view(env: Environment, workspace: Path) -> Path:
    """What a grader sees as ``workspace``'s environment: its full workspace when there is one beside it, else the
    workspace (an episode recorded before its environment hid paths holds them all in its workspace)."""
    full = full_workspace(env, workspace)
    return full if full.is_dir() else workspace


def copy_workspace(env: Environment, dest: Path) -> None:
    """Copy ``env``'s workspace to ``dest`` (which must not exist), then its shared files into it; without its
    hidden paths, the full workspace laid out beside it (``full_workspace``)."""
    paths = hidden_paths(env)
    source = env.workspace
    if source.is_dir():
        def ignore(folder: str, names: list[str]) -> set[str]:
            base = Path(folder).relative_to(source).as_posix()
            rels = {name: name if base == "." else f"{base}/{name}" for name in names}
            return {name for name, rel in rels.items() if paths.is_hidden(rel) and not paths.holds(rel)}

        shutil.copytree(source, dest, symlinks=True, ignore=ignore if paths else None)
    else:
        dest.mkdir()
    for name in env.manifest.shared:
        shutil.copy2(SHARED_DIR / name, dest / name)
    if paths:
        for rel in paths.visible:  # where a visible file the server writes later will be (server/ of server/x.json)
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        lay_out_full_workspace(source, dest, dest.parent / FULL_WORKSPACE, paths)


def lay_out_full_workspace(source: Path, workspace: Path, full: Path, paths: HiddenPaths) -> None:
    """Make ``full`` (which must not exist): ``source``'s hidden paths copied, the rest linked into ``workspace``."""
    full.mkdir()
    _fill(source, workspace, full, "", paths)


def _fill(source: Path, workspace: Path, full: Path, base: str, paths: HiddenPaths) -> None:
    names: set[str] = set()
    for root in (source, workspace):
        where = root / base if base else root
        if where.is_dir() and not where.is_symlink():
            names.update(os.listdir(where))
    prefix = base + "/" if base else ""
    names.update(p[len(prefix):].split("/")[0] for p in paths.visible if p.startswith(prefix))
    for name in sorted(names):
        rel = prefix + name
        at = full / rel
        if paths.is_visible(rel) or not (paths.holds(rel) or paths.is_hidden(rel)):
            at.symlink_to(os.path.relpath(workspace / rel, at.parent))
        elif paths.holds(rel):
            at.mkdir()
            _fill(source, workspace, full, rel, paths)
        elif (source / rel).is_dir() and not (source / rel).is_symlink():
            shutil.copytree(source / rel, at, symlinks=True)
        elif (source / rel).exists() or (source / rel).is_symlink():
            shutil.copy2(source / rel, at, follow_symlinks=False)


__all__ = ["FULL_WORKSPACE", "FULL_WORKSPACE_VAR", "HiddenPaths", "copy_workspace", "full_workspace", "hidden_paths",
           "lay_out_full_workspace", "services_view"]
