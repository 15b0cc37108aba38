"""An app's Gemfile (`[ruby]`) installed before setup: offline, the episode's Gemfile.lock becomes the resolution the
gems were installed for (each differing pin logged), and `bundle exec` in the app's directory loads them."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest

from stripebench_tui.core.bus import EventBus
from stripebench_tui.core.events import Service
from stripebench_tui.core.redact import Redactor
from stripebench_tui.envs import ruby_gems
from stripebench_tui.envs.manifest import RubySpec
from stripebench_tui.runtime.ruby_step import episode_env, install_app_gems, planned_env
from stripebench_tui.runtime.services import ServiceFailed
from tests.envs.test_ruby_gems import _toy_gem

LOCK = """GEM
  remote: https://rubygems.org/
  specs:
    json ({json})
    toy-base (1.0.0)

PLATFORMS
  arm64-darwin-25

DEPENDENCIES
  json
  toy-base (= 1.0.0)
"""


@pytest.fixture()
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    _toy_gem(tmp_path / "sources", "toy-base", {"1.0.0": ""})
    monkeypatch.setenv(ruby_gems.SOURCES_VAR, str(tmp_path / "sources"))
    monkeypatch.setenv(ruby_gems.MODE_VAR, "local")
    monkeypatch.setenv("STRIPEBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(ruby_gems, "MIRROR_ROOT", tmp_path / "no-mirror")
    return tmp_path


def _install(workspace: Path, tmp_path: Path) -> tuple[dict[str, str], list[Service]]:
    seen: list[Service] = []

    async def go() -> dict[str, str]:
        bus = EventBus()
        bus.subscribe(lambda ev: seen.append(ev) if isinstance(ev, Service) else None, name="test")
        try:
            return await install_app_gems(bus, workspace, RubySpec(gemfile="server/Gemfile"),
                                          tmp_path / "logs" / "gems.log", Redactor())
        finally:
            await bus.close()

    env = asyncio.run(go())
    return env, seen


def test_the_apps_gems_are_installed_and_its_lock_becomes_what_was_resolved(offline: Path) -> None:
    json_here = subprocess.run(["ruby", "-e", "print Gem::Specification.find_by_name('json').version"],
                               capture_output=True, text=True, check=True).stdout
    server = offline / "ws" / "server"
    server.mkdir(parents=True)
    (server / "Gemfile").write_text('source "https://rubygems.org"\ngem "toy-base", "1.0.0"\ngem "json"\n')
    (server / "Gemfile.lock").write_text(LOCK.format(json="0.0.1"))  # a json no machine has: the installed one fits
    planned = planned_env(offline / "ws", RubySpec(gemfile="server/Gemfile"))  # what the agent's tools start with
    env, seen = _install(offline / "ws", offline)
    # the app's own Gemfile, found from its directory; offline, bundler's mirror of rubygems.org is the empty index
    assert set(env) == {"GEM_HOME", "GEM_PATH", "PATH", ruby_gems.MIRROR_VAR}, env
    assert planned == env
    log = (offline / "logs" / "gems.log").read_text()
    assert "building toy-base 1.0.0" in log
    assert f"server/Gemfile.lock: json {json_here} where Gemfile.lock has 0.0.1: the installed one fits" in log, log
    assert "x86_64-linux" in (server / "Gemfile.lock").read_text() or "ruby" in (server / "Gemfile.lock").read_text()
    assert [s.status for s in seen][-1] == "healthy"
    ran = subprocess.run(["bundle", "exec", "ruby", "-e", "require 'toy-base'; print ToyBase::VERSION"], cwd=server,
                         env={**os.environ, **env, "PATH": env["PATH"] + os.pathsep + os.environ["PATH"]},
                         capture_output=True, text=True, timeout=120)
    assert ran.stdout == "1.0.0", ran.stderr


def _bundler(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``argv`` run as the agent's shell runs it: our variables less bundler's and the gems', then the episode's; and
    no way out to a registry (a proxy on a closed port: a fetch fails at once, reachable registry or not)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GEM_", "BUNDLE_"))}
    dead = "http://127.0.0.1:9"
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=120,
                          env={**base, **env, "PATH": env["PATH"] + os.pathsep + os.environ["PATH"],
                               "https_proxy": dead, "HTTPS_PROXY": dead, "http_proxy": dead, "HTTP_PROXY": dead})


def test_offline_the_agents_plain_bundle_install_resolves_a_changed_pin_from_the_installed_gems(offline: Path) -> None:
    """A task says "run `bundle install`" after moving the SDK's pin (sdk-upgrades-ruby): offline, with the episode's
    variables, plain `bundle install`, `bundle update` and `bundle lock` take the gem installed beside the app's (the
    prefetch), and a gem that is not here is bundler's own error at once, not a wait on the network."""
    _toy_gem(offline / "sources", "toy-next", {"1.0.0": "", "2.0.0": ""})
    where = offline / "bundle"
    gems = [str(ruby_gems.build("toy-next", version)) for version in ("1.0.0", "2.0.0")]
    subprocess.run(["gem", "install", "--local", "--ignore-dependencies", "--no-document", "--install-dir",
                    str(where / "home"), *gems], check=True, capture_output=True, timeout=120)
    env = episode_env(where, "local")
    assert ruby_gems.MIRROR_VAR not in episode_env(where, "registry")  # online, bundler as the Dockerfile has it
    app = offline / "ws" / "server"
    app.mkdir(parents=True)
    (app / "Gemfile").write_text('source "https://rubygems.org"\ngem "toy-next", "~> 2.0"\n')
    (app / "Gemfile.lock").write_text("GEM\n  remote: https://rubygems.org/\n  specs:\n    toy-next (1.0.0)\n\n"
                                      "PLATFORMS\n  ruby\n\nDEPENDENCIES\n  toy-next (~> 1.0)\n")
    without = _bundler(["bundle", "install"], app, {k: v for k, v in env.items() if k != ruby_gems.MIRROR_VAR})
    assert without.returncode != 0, "without the mirror bundler asks the registry (what this test guards)"
    ran = _bundler(["bundle", "install"], app, env)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    lock = (app / "Gemfile.lock").read_text()
    assert "toy-next (2.0.0)" in lock and "remote: https://rubygems.org/" in lock, lock
    for argv in (["bundle", "update", "toy-next"], ["bundle", "lock"]):
        again = _bundler(argv, app, env)
        assert again.returncode == 0 and "toy-next (2.0.0)" in (app / "Gemfile.lock").read_text(), again.stderr
    (app / "Gemfile").write_text('source "https://rubygems.org"\ngem "toy-next", "~> 2.0"\ngem "toy-elsewhere"\n')
    missing = _bundler(["bundle", "install"], app, env)
    assert missing.returncode != 0
    assert ("Could not find gem 'toy-elsewhere' in rubygems repository https://rubygems.org/ or installed locally"
            in " ".join((missing.stdout + missing.stderr).split())), missing.stdout + missing.stderr


def test_an_app_gem_that_cannot_be_had_fails_setup_naming_it(offline: Path) -> None:
    server = offline / "ws" / "server"
    server.mkdir(parents=True)
    (server / "Gemfile").write_text('source "https://rubygems.org"\ngem "sinatra", "4.1.1"\n')
    with pytest.raises(ServiceFailed, match=r"gems: gem sinatra 4\.1\.1 must be built, but there is no checkout of it: "
                                            r"clone https://github.com/sinatra/sinatra"):
        _install(offline / "ws", offline)


@pytest.mark.slow
async def test_the_agents_shell_runs_bundle_exec_with_the_apps_gems(offline: Path) -> None:
    """The tool servers start once the gems are installed: their processes get GEM_HOME and the rest, so an agent's
    `bundle exec ruby …` in the app's directory loads what the app loads (checkout-gym's oracle runs
    generate_solution.sh's `bundle exec` so)."""
    import shutil

    from stripebench_tui.envs.catalog import load_environment
    from stripebench_tui.runtime.episode import Episode, EpisodeConfig

    root = offline / "envs" / "tiny-shop"
    shutil.copytree(Path(__file__).parents[1] / "fixtures" / "envs" / "tiny-shop", root)
    manifest = root / "environment.toml"
    manifest.write_text(manifest.read_text() + '\n[ruby]\ngemfile = "server/Gemfile"\n')
    server = root / "workspace" / "server"
    server.mkdir()
    (server / "Gemfile").write_text('source "https://rubygems.org"\ngem "toy-base", "1.0.0"\n')
    (root / "plans" / "solution.toml").write_text(
        '[[step]]\nsay = "Load the app\'s gem."\ntool = "shell"\n'
        'args = { command = "cd server && bundle exec ruby -e \\"require %q(toy-base); print ToyBase::VERSION\\" > ../gem.txt" '
        '}\n\n'
        '[[step]]\nsay = "Done."\ndone = true\n')
    episode_dir = offline / "episode"
    result = await Episode(EpisodeConfig(env=load_environment(root), agent="oracle", episode_dir=episode_dir,
                                         grading=False)).run()
    assert not result.setup_failed, result.error
    assert (episode_dir / "workspace" / "gem.txt").read_text() == "1.0.0"
