"""What an environment's ``[postgres]``, ``[node]`` and a Ruby grader's gems need from this machine, for ``doctor``
and ``envs --path``.

Each check is (present, one line): what was found and where, or what is missing and the command that installs it.
"""

from __future__ import annotations

from pathlib import Path

from stripebench_tui.envs import ruby_gems
from stripebench_tui.envs.bench_overlay import ExternalGraderSpec, Overlay, published_dir
from stripebench_tui.envs.manifest import Manifest
from stripebench_tui.runtime import node_packages, postgres


def manifest_checks(manifest: Manifest) -> list[tuple[bool, str]]:
    """The checks of what ``manifest`` asks this machine to make (none for most environments)."""
    out = []
    if manifest.postgres is not None:
        out.append(postgres.describe())
    if manifest.node is not None:
        out.append(node_packages.describe(manifest.node.min_node))
    if manifest.ruby is not None and manifest.workspace:
        gemfile = Path(manifest.workspace) / manifest.ruby.gemfile
        try:
            extra = ruby_gems.parse_extra(manifest.ruby.prefetch)
        except ruby_gems.GemProblem as exc:
            return [*out, (False, str(exc))]
        out.extend(ruby_gems.describe(ruby_gems.GemBundle(gemfile, gemfile.with_name("Gemfile.lock"), extra=extra)))
    return out


def grader_checks(folder: Path, grader: ExternalGraderSpec) -> list[tuple[bool, str]]:
    """For a benchmark folder's grader with a Gemfile: the path its gems take here and, offline, what comes from
    where and what is missing, with the fix (none for other graders)."""
    if grader.gems is None:
        return []
    gems = grader.gems
    return ruby_gems.describe(ruby_gems.bundle_of(folder, gems.gemfile, gems.lockfile, gems.use_lock))


def _ruby_users(overlay: Overlay) -> bool:
    return overlay.grader.gems is not None or any(p.grader is not None and p.grader.gems is not None
                                                  for p in overlay.problems.values())


def published_checks() -> list[tuple[bool, str]]:
    """The same checks once for every shipped overlay that asks for them, naming the folders that need each."""
    users: dict[str, list[str]] = {"postgres": [], "node": [], "ruby": []}
    overlays = []
    for path in sorted(published_dir().glob("*.toml")):
        overlay = Overlay.load(path)
        overlays.append(overlay)
        if overlay.postgres is not None:
            users["postgres"].append(path.stem)
        if overlay.node is not None:
            users["node"].append(path.stem)
        if _ruby_users(overlay):
            users["ruby"].append(path.stem)
    out = []
    needs = max((o.node.min_node or 0 for o in overlays if o.node is not None), default=0) or None
    def ruby() -> tuple[bool, str]:
        ok, text = ruby_gems.describe()[0]
        return ok, text + ("; `stripebench envs --path FOLDER` lists each gem's source" if ok else "")

    for kind, describe in (("postgres", postgres.describe), ("node", lambda: node_packages.describe(needs)), ("ruby", ruby)):
        if users[kind]:
            ok, text = describe()
            out.append((ok, f"{text} [for {', '.join(users[kind])}]"))
    return out


__all__ = ["grader_checks", "manifest_checks", "published_checks"]
