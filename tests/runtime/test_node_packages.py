"""An app's npm packages (runtime.node_packages): real pnpm installs, the cache that makes a second one work without
the registry, and one line naming the cause and fix for each way an install fails."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stripebench_tui.runtime import node_binary, node_packages

DEAD_REGISTRY = {"npm_config_registry": "http://127.0.0.1:9", "npm_config_fetch_retries": "0"}


def _app(path: Path, deps: dict[str, str]) -> Path:
    path.mkdir(parents=True)
    # the name makes package.json (the lock cache's key) new on every run
    (path / "package.json").write_text(json.dumps({"name": f"t-{path.parent.name}", "version": "1.0.0",
                                                   "private": True, "dependencies": deps}))
    return path


def _install(app: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "stripebench_tui.runtime.node_packages", "install", "--dir", str(app)],
                          capture_output=True, text=True, timeout=600, env={**os.environ, **env})


@pytest.fixture(scope="module")
def pnpm() -> Path:
    return node_packages.ensure_pnpm(lambda _line: None)  # once (the registry is reachable here); later runs reuse it


def test_a_second_install_of_the_same_package_json_needs_no_registry(tmp_path: Path, pnpm: Path) -> None:
    first = _app(tmp_path / "one", {"left-pad": "1.3.0"})
    done = _install(first)
    assert done.returncode == 0, done.stderr
    assert (first / "node_modules" / "left-pad" / "package.json").is_file()
    assert "packages: packages installed in" in done.stdout
    lock = (first / node_packages.LOCKFILE).read_text()

    second = tmp_path / "two"
    second.mkdir()
    (second / "package.json").write_bytes((first / "package.json").read_bytes())
    again = _install(second, **DEAD_REGISTRY)
    assert again.returncode == 0, again.stderr + again.stdout
    assert "resolved by an earlier install" in again.stdout
    assert (second / node_packages.LOCKFILE).read_text() == lock, "the same versions as the first episode"
    assert (second / "node_modules" / "left-pad" / "index.js").is_file()
    # the shim every process of the episode finds first on PATH runs the same pnpm on the same store
    env = {**os.environ, **node_packages.process_env(os.environ)}
    listed = subprocess.run(["pnpm", "list", "--depth", "0"], cwd=second, capture_output=True, text=True, env=env, timeout=120)
    assert listed.returncode == 0 and "left-pad 1.3.0" in listed.stdout, listed.stderr


def test_an_unreachable_registry_is_one_line_and_caches_nothing(tmp_path: Path, pnpm: Path) -> None:
    app = _app(tmp_path / "app", {"left-pad": "1.3.0", "is-number": "7.0.0"})
    failed = _install(app, **DEAD_REGISTRY)
    assert failed.returncode == 2
    assert failed.stderr.strip() == ("packages: the npm registry is unreachable: check the network, or point "
                                     "npm_config_registry at a reachable mirror")
    assert not (app / node_packages.LOCKFILE).exists()
    assert not node_packages._lock_cache((app / "package.json").read_bytes()).exists()


def test_a_broken_lockfile_is_one_line_with_the_fix(tmp_path: Path, pnpm: Path) -> None:
    app = _app(tmp_path / "app", {})
    broken = "lockfileVersion: [[[\n  nonsense: {\n"
    (app / node_packages.LOCKFILE).write_text(broken)
    failed = _install(app)
    assert failed.returncode == 2
    assert failed.stderr.strip() == ("packages: pnpm-lock.yaml is broken: fix it, or delete it and the next install "
                                     "resolves a new one")
    assert (app / node_packages.LOCKFILE).read_text() == broken, "the app's own lockfile is never replaced"


def test_a_package_json_that_is_not_json_is_refused_before_pnpm_runs(tmp_path: Path) -> None:
    app = tmp_path / "app"
    app.mkdir()
    (app / "package.json").write_text("{ not json")
    with pytest.raises(node_packages.InstallProblem, match=r"package.json is not valid JSON .*: correct it"):
        node_packages.install(app, lambda _line: None)
    assert sorted(p.name for p in app.iterdir()) == ["package.json"]


@pytest.mark.parametrize(("output", "cause"), [
    ("ERR_PNPM_OUTDATED_LOCKFILE  Cannot install with \"frozen-lockfile\"", "does not match package.json"),
    ("ERR_PNPM_NO_MATCHING_VERSION  No matching version found for left-pad@99", "does not exist on the registry"),
    ("something else entirely\nthe last line", "pnpm install exited with code 1: the last line"),
])
def test_what_pnpm_says_becomes_the_cause(output: str, cause: str) -> None:
    assert cause in node_packages.explain(output, 1)


def test_an_older_node_on_this_machine_gives_way_to_the_one_the_app_needs(tmp_path: Path) -> None:
    """As on Debian 12 (Node 18) with a Next.js 15.5 app (20): here the machine has 20, so the app asks for 22."""
    mine = node_packages._major(node_packages.node_version())
    wanted = mine + 2
    assert node_packages.node_bin(mine) is None, "a new enough Node is used as it is"
    lines: list[str] = []
    bin_dir = node_packages.ensure_node(wanted, lines.append)
    assert bin_dir is not None and (bin_dir / "node").is_file()
    assert node_packages.ensure_node(wanted, lines.append) == bin_dir, "installed once, then reused"
    env = {**os.environ, **node_packages.process_env(os.environ, "", wanted)}
    ran = subprocess.run(["node", "--version"], capture_output=True, text=True, env=env, timeout=30)
    assert node_packages._major(ran.stdout) == wanted, "every process of the episode runs the newer Node"
    ok, text = node_packages.describe(wanted)
    assert ok and f"(the app needs {wanted}: {node_binary.pin_for(wanted).spec}, cached)" in text
