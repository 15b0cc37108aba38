"""What an environment's ``[postgres]`` and ``[node]`` need from this machine, for ``doctor`` and ``envs --path``.

Each check is (present, one line): what was found and where, or what is missing and the command that installs it.
"""

from __future__ import annotations

from stripebench_tui.envs.bench_overlay import Overlay, published_dir
from stripebench_tui.envs.manifest import Manifest
from stripebench_tui.runtime import node_packages, postgres


def manifest_checks(manifest: Manifest) -> list[tuple[bool, str]]:
    """The checks of what ``manifest`` asks this machine to make (none for most environments)."""
    out = []
    if manifest.postgres is not None:
        out.append(postgres.describe())
    if manifest.node is not None:
        out.append(node_packages.describe(manifest.node.min_node))
    return out


def published_checks() -> list[tuple[bool, str]]:
    """The same checks once for every shipped overlay that asks for them, naming the folders that need each."""
    users: dict[str, list[str]] = {"postgres": [], "node": []}
    overlays = []
    for path in sorted(published_dir().glob("*.toml")):
        overlay = Overlay.load(path)
        overlays.append(overlay)
        if overlay.postgres is not None:
            users["postgres"].append(path.stem)
        if overlay.node is not None:
            users["node"].append(path.stem)
    out = []
    needs = max((o.node.min_node or 0 for o in overlays if o.node is not None), default=0) or None
    for kind, describe in (("postgres", postgres.describe), ("node", lambda: node_packages.describe(needs))):
        if users[kind]:
            ok, text = describe()
            out.append((ok, f"{text} [for {', '.join(users[kind])}]"))
    return out


__all__ = ["manifest_checks", "published_checks"]
