"""Gems for a Gemfile, offline: installed gems where they fit, the rest built from a git checkout at its release tag.

Two toy gems of ours, each a git repository with release tags (``toy-base`` 1.0.0 and 2.0.0, ``toy-app`` 0.3.0
needing ``toy-base ~> 2.0``), stand in for public gems' repositories: the planner walks what the Gemfile asks for,
the builder makes each from its tag once into the cache (concurrent builders build it once), and ``bundle exec``
then loads exactly the pinned versions. Ruby, ``gem``, ``bundle`` and git are set-up's (scripts/setup.sh).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from stripebench_tui.envs import ruby_gems
from stripebench_tui.envs.ruby_gems import GemBundle, GemProblem


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                   check=True, capture_output=True)


def _toy_gem(root: Path, name: str, versions: dict[str, str], *, tag: str = "v{version}") -> Path:
    """A repository whose gemspec lists its files with `git ls-files`, one commit and tag per version
    (``versions``: version -> the dependency line, or "")."""
    repo = root / name
    (repo / "lib").mkdir(parents=True)
    _git(repo, "init", "-q")
    module = "".join(part.capitalize() for part in name.split("-"))
    for version, dependency in versions.items():
        (repo / "lib" / f"{name}.rb").write_text(f"module {module}\n  VERSION = '{version}'\nend\n")
        (repo / f"{name}.gemspec").write_text(
            "Gem::Specification.new do |s|\n"
            f"  s.name = '{name}'\n  s.version = '{version}'\n  s.summary = 'a toy gem'\n  s.authors = ['t']\n"
            "  s.files = `git ls-files -- lib`.split(\"\\n\")\n"
            + (f"  s.add_runtime_dependency {dependency}\n" if dependency else "") + "end\n")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", version)
        _git(repo, "tag", tag.format(version=version))
    return repo


@pytest.fixture()
def sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "sources"
    _toy_gem(root, "toy-base", {"1.0.0": "", "2.0.0": ""})
    _toy_gem(root, "toy-app", {"0.3.0": "'toy-base', '~> 2.0'"})
    monkeypatch.setenv(ruby_gems.SOURCES_VAR, str(root))
    monkeypatch.setenv(ruby_gems.MODE_VAR, "local")
    monkeypatch.setenv("STRIPEBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(ruby_gems, "MIRROR_ROOT", tmp_path / "no-mirror")
    return root


def _gemfile(folder: Path, body: str, lock: str = "") -> GemBundle:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "Gemfile").write_text('source "https://rubygems.org"\n' + body)
    if lock:
        (folder / "Gemfile.lock").write_text(lock)
    return GemBundle(folder / "Gemfile", folder / "Gemfile.lock" if lock else None)


LOCK = """GEM
  remote: https://rubygems.org/
  specs:
    toy-app (0.3.0)
      toy-base (~> 2.0)
    toy-base (2.0.0)

PLATFORMS
  arm64-darwin-25

DEPENDENCIES
  toy-app (= 0.3.0)
"""


def test_the_plan_builds_what_nothing_installed_fits_at_the_locked_version(sources: Path, tmp_path: Path) -> None:
    bundle = _gemfile(tmp_path / "folder", "gem 'toy-app', '0.3.0'\ngem 'json'\n", LOCK)
    plan = ruby_gems.plan(bundle)
    rows = {n.name: n for n in plan.needs}
    assert rows["toy-app"].build == "0.3.0" and rows["toy-app"].why == "Gemfile.lock"
    assert rows["toy-base"].build == "2.0.0" and rows["toy-base"].via == "toy-app"  # the lock's dependency
    assert rows["json"].have and rows["json"].origin == "default"  # Ruby's own gem fits: nothing to build
    assert not plan.unmet()


@pytest.mark.drill  # about 10 s alone, 40 s on a loaded machine: ruby and bundler start many times
def test_a_bundle_is_built_from_the_tags_and_bundle_exec_loads_the_pinned_versions(sources: Path, tmp_path: Path) -> None:
    bundle = _gemfile(tmp_path / "folder", "gem 'toy-app', '0.3.0'\n", LOCK)
    said: list[str] = []
    where = ruby_gems.ensure(bundle, said.append)
    assert (where / "complete").is_file()
    assert any("building toy-base 2.0.0" in line and "at v2.0.0" in line for line in said), said
    assert ruby_gems.built_gem("toy-app", "0.3.0").is_file()
    env = {**os.environ, **ruby_gems.process_env(where)}
    ran = subprocess.run(["bundle", "exec", "ruby", "-e",
                          "require 'toy-app'; require 'toy-base'; print ToyApp::VERSION, ' ', ToyBase::VERSION"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert ran.stdout == "0.3.0 2.0.0", ran.stderr
    assert (tmp_path / "folder" / "Gemfile.lock").read_text() == LOCK, "the folder's lock is never rewritten"
    # a second ensure reuses the bundle; another Gemfile with the same gems reuses the built gems
    again: list[str] = []
    assert ruby_gems.ensure(bundle, again.append) == where and again == []
    other = _gemfile(tmp_path / "other", "gem 'toy-base', '2.0.0'\n")
    more: list[str] = []
    ruby_gems.ensure(other, more.append)
    assert not any(line.startswith("building") for line in more), more


def test_an_exact_pin_without_a_lock_is_built_and_a_pin_that_no_tag_has_is_named(sources: Path, tmp_path: Path) -> None:
    plan = ruby_gems.plan(_gemfile(tmp_path / "a", "gem 'toy-base', '1.0.0'\n"))
    assert [(n.name, n.build, n.why) for n in plan.needs] == [("toy-base", "1.0.0", "pinned")]
    with pytest.raises(GemProblem,
                       match=r"toy-base 9\.9\.9: .*toy-base has no release tag for it \(looked for v9\.9\.9, 9\.9\.9\)"):
        ruby_gems.ensure(_gemfile(tmp_path / "b", "gem 'toy-base', '9.9.9'\n"))
    with pytest.raises(GemProblem, match=r"gem toy-base ~> 1\.0 \(for Gemfile\): no installed gem fits and no version to build"):
        ruby_gems.ensure(_gemfile(tmp_path / "c", "gem 'toy-base', '~> 1.0'\n"))


def test_a_gem_without_a_checkout_says_where_to_get_one(sources: Path, tmp_path: Path) -> None:
    bundle = _gemfile(tmp_path / "f", "gem 'stripe', '15.2.1'\n")
    checks = ruby_gems.describe(bundle)
    assert any(not ok and "gem stripe 15.2.1 (for Gemfile): no checkout: clone https://github.com/stripe/stripe-ruby as stripe "
               f"into a directory named by {ruby_gems.SOURCES_VAR}" in text for ok, text in checks), checks
    with pytest.raises(GemProblem, match="no checkout of it: clone https://github.com/stripe/stripe-ruby"):
        ruby_gems.ensure(bundle)


def test_checkouts_are_found_by_gem_name_or_in_a_mirrors_layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, mirror = tmp_path / "first", tmp_path / "mirror"
    _toy_gem(first, "dotenv", {"2.8.1": ""})
    (mirror / "stripe+stripe-ruby" / "repo").mkdir(parents=True)
    _git(mirror / "stripe+stripe-ruby" / "repo", "init", "-q", "--bare")
    monkeypatch.setenv(ruby_gems.SOURCES_VAR, f"{tmp_path / 'empty'}{os.pathsep}{first}")
    monkeypatch.setattr(ruby_gems, "MIRROR_ROOT", mirror)
    assert ruby_gems.find_checkout("dotenv") == first / "dotenv"
    assert ruby_gems.find_checkout("stripe") == mirror / "stripe+stripe-ruby" / "repo"
    assert ruby_gems.find_checkout("rack") is None


def test_a_placeholder_version_is_stamped_from_the_tag_as_the_release_does(sources: Path, tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _toy_gem(sources, "toy-stamped", {}, tag="{version}")
    (repo / "lib" / "version.rb").write_text("module ToyStamped\n  VERSION = '1.0.0.develop'\nend\n")
    (repo / "toy-stamped.gemspec").write_text(
        "require_relative 'lib/version'\nGem::Specification.new do |s|\n  s.name = 'toy-stamped'\n"
        "  s.version = ToyStamped::VERSION\n  s.summary = 'x'\n  s.authors = ['t']\n  s.files = Dir['lib/**/*']\nend\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "x")
    _git(repo, "tag", "2.4.0")
    with pytest.raises(GemProblem, match=r"did not make toy-stamped-2\.4\.0\.gem: it made toy-stamped-1\.0\.0\.develop\.gem"):
        ruby_gems.build("toy-stamped", "2.4.0")
    monkeypatch.setitem(ruby_gems.SOURCES, "toy-stamped", ruby_gems.GemSource("x/toy-stamped", tags=("{version}",),
                                                                              version_file="lib/version.rb"))
    assert ruby_gems.build("toy-stamped", "2.4.0").name == "toy-stamped-2.4.0.gem"


def test_concurrent_builders_build_a_gem_once(sources: Path, tmp_path: Path) -> None:
    code = ("import sys; from stripebench_tui.envs import ruby_gems as r; "
            "r.build('toy-base', '2.0.0', lambda t: print(t, flush=True))")
    procs = [subprocess.Popen([sys.executable, "-c", code], env={**os.environ}, stdout=subprocess.PIPE, text=True)
             for _ in range(3)]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    assert sum(out.count("building toy-base 2.0.0") for out in outs) == 1, outs
    assert ruby_gems.built_gem("toy-base", "2.0.0").is_file()
    assert not [p for p in ruby_gems.gems_dir().iterdir() if p.name.startswith(".toy-base")], "no staging left"


def test_the_resolution_names_each_version_that_differs_from_the_folders_lock(tmp_path: Path) -> None:
    folder = tmp_path / "f"
    folder.mkdir()
    (folder / "Gemfile").write_text("gem 'rest-client', '2.1.0'\n")
    (folder / "Gemfile.lock").write_text("GEM\n  specs:\n    http-accept (1.7.0)\n    rest-client (2.1.0)\n    logger (1.7.0)\n")
    resolved = tmp_path / "resolved.lock"
    resolved.write_text("GEM\n  specs:\n    http-accept (2.2.0)\n    rest-client (2.1.0)\n    unf (0.1.4)\n")
    lines = ruby_gems.lock_differences(GemBundle(folder / "Gemfile", folder / "Gemfile.lock"), resolved)
    assert lines == [
        "http-accept 2.2.0 where Gemfile.lock has 1.7.0: the installed one fits (the Gemfile does not pin it and "
        "bundler resolved it without the lock)",
        "logger: Gemfile.lock has 1.7.0; this resolution needs none",
        "unf 0.1.4: not in Gemfile.lock (an installed gem's dependency)",
    ]


def test_the_mode_follows_the_variable_and_rejects_nonsense(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ruby_gems.MODE_VAR, "registry")
    assert ruby_gems.mode() == ("registry", f"{ruby_gems.MODE_VAR}=registry")
    monkeypatch.setenv(ruby_gems.MODE_VAR, "auto")
    monkeypatch.setattr(ruby_gems, "registry_reachable", lambda timeout=3.0: False)
    assert ruby_gems.mode() == ("local", "rubygems.org is not reachable")
    monkeypatch.setenv(ruby_gems.MODE_VAR, "sometimes")
    with pytest.raises(GemProblem, match="say registry, local or auto"):
        ruby_gems.mode()


@pytest.mark.drill  # ruby, gem and bundler start several times
def test_a_prefetched_gem_lands_beside_the_bundle_for_a_later_bundle_install_local(sources: Path, tmp_path: Path) -> None:
    """As sdk-upgrades-ruby's Dockerfile prefetches stripe 15: the app's Gemfile pins toy-base 1, the upgrade moves
    it to 2, and `bundle install --local` of the changed Gemfile finds 2.0.0 installed."""
    folder = tmp_path / "app"
    plain = _gemfile(folder, "gem 'toy-base', '~> 1.0'\n", "GEM\n  remote: https://rubygems.org/\n  specs:\n"
                     "    toy-base (1.0.0)\n\nPLATFORMS\n  ruby\n\nDEPENDENCIES\n  toy-base (~> 1.0)\n")
    bundle = GemBundle(plain.gemfile, plain.lockfile, extra=ruby_gems.parse_extra(["toy-base 2.0.0"]))
    assert bundle.key("local") != plain.key("local")  # the prefetch is part of the bundle
    said: list[str] = []
    where = ruby_gems.ensure(bundle, said.append)
    assert "toy-base 2.0.0 installed beside the bundle (prefetched)" in said
    assert "toy-base (1.0.0)" in (where / "Gemfile.lock").read_text()  # the Gemfile's own resolution is unchanged
    (folder / "Gemfile").write_text('source "https://rubygems.org"\ngem "toy-base", "~> 2.0"\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GEM_", "BUNDLE_"))}
    env.update({k: v for k, v in ruby_gems.process_env(where).items() if not k.startswith("BUNDLE_")})
    ran = subprocess.run(["bundle", "install", "--local"], cwd=folder, env=env, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "toy-base (2.0.0)" in (folder / "Gemfile.lock").read_text()


@pytest.mark.parametrize("spec", ["stripe", "stripe ~> 15", "stripe 15.5.0 extra"])
def test_a_prefetch_names_a_gem_and_its_exact_version(spec: str) -> None:
    assert ruby_gems.parse_extra(["stripe 15.5.0"]) == (("stripe", "15.5.0"),)
    with pytest.raises(GemProblem, match="say a gem and its exact version"):
        ruby_gems.parse_extra([spec])


def test_the_empty_index_is_made_once_by_concurrent_episodes_and_lists_no_gems(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """What offline bundler is pointed at (``no_registry_env``): each index file Marshal's empty list, as
    `gem generate_index` writes for a directory of no gems; two episodes at once make it once, leave no staging."""
    monkeypatch.setenv("STRIPEBENCH_CACHE", str(tmp_path / "cache"))
    code = "from stripebench_tui.envs import ruby_gems as r; print(r.no_registry_env()[r.MIRROR_VAR])"
    procs = [subprocess.Popen([sys.executable, "-c", code], env={**os.environ}, stdout=subprocess.PIPE, text=True)
             for _ in range(3)]
    outs = {p.communicate(timeout=120)[0].strip() for p in procs}
    index = ruby_gems.empty_index()
    assert outs == {index.as_uri()}
    assert sorted(p.name for p in index.parent.iterdir() if not p.name.endswith(".lock")) == ["empty-index"]
    read = subprocess.run(["ruby", "-e", "print Marshal.load(Gem::Util.gunzip(File.binread(ARGV[0]))).inspect",
                           str(index / "specs.4.8.gz")], capture_output=True, text=True, timeout=60)
    assert read.stdout == "[]", read.stderr
