"""The episode step that installs an app's gems (``[ruby]``): ``envs.ruby_gems.ensure`` with its progress on the bus.

Each line becomes a ``gems`` service log event and a line of ``logs/gems.log``; the end is ``healthy`` or
``unhealthy`` and ServiceFailed with the cause and fix. Offline, the episode's copy of the app's Gemfile.lock is
replaced by the resolution the gems were installed for (each version that differs from the app's lock is logged),
so ``bundle exec`` in the app's directory finds every gem it names. Returns the variables every process of the
episode gets (``GEM_HOME``, ``GEM_PATH``, ``PATH``; not ``BUNDLE_GEMFILE``: the app's own Gemfile is found from its
directory). Offline they also get ``ruby_gems.no_registry_env``, so the agent's plain ``bundle install`` of a changed
Gemfile (a task's "run `bundle install`") resolves from the installed gems instead of asking rubygems.org; with the
registry the agent's bundler is left as the folder's Dockerfile has it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from stripebench_tui.core.bus import EventBus
from stripebench_tui.core.redact import Redactor
from stripebench_tui.envs import ruby_gems
from stripebench_tui.envs.manifest import RubySpec
from stripebench_tui.runtime.install_step import run_install

SERVICE = "gems"


def _bundle(workspace: Path, spec: RubySpec) -> ruby_gems.GemBundle:
    gemfile = workspace / spec.gemfile
    lock = gemfile.with_name("Gemfile.lock")
    which, _ = ruby_gems.mode()
    # the registry installs what the app's lock names; offline, the Gemfile resolved against what is here
    return ruby_gems.GemBundle(gemfile, lock if lock.is_file() else None, use_lock=which == "registry",
                               extra=ruby_gems.parse_extra(spec.prefetch))


def episode_env(where: Path, which: str) -> dict[str, str]:
    """The variables of the episode's processes for the bundle made at ``where`` on path ``which``."""
    env = ruby_gems.process_env(where, env_path="")
    env.pop("BUNDLE_GEMFILE", None)
    env.pop("BUNDLE_FROZEN", None)
    if which == "local":
        env.update(ruby_gems.no_registry_env())
    return env


def planned_env(workspace: Path, spec: RubySpec) -> dict[str, str]:
    """The variables the install will give, known before it runs (the bundle's directory is named by the Gemfile,
    the path and Ruby): the agent's tool servers start meanwhile, and their shell must find the app's gems too.
    {} when the path cannot be told yet (the install then says why)."""
    try:
        which, _ = ruby_gems.mode()
        return episode_env(ruby_gems.bundle_dir(_bundle(workspace, spec), which), which)
    except (ruby_gems.GemProblem, OSError):
        return {}


def _install(workspace: Path, spec: RubySpec, say: ruby_gems.Say) -> dict[str, str]:
    bundle = _bundle(workspace, spec)
    lock = bundle.gemfile.with_name("Gemfile.lock")
    where = ruby_gems.ensure(bundle, say)
    which = "local" if where == ruby_gems.bundle_dir(bundle, "local") else "registry"  # the path ensure took
    resolved = where / "Gemfile.lock"
    if resolved.is_file() and (not lock.is_file() or lock.read_bytes() != resolved.read_bytes()):
        if lock.is_file():
            for line in ruby_gems.lock_differences(bundle, resolved):
                say(f"{lock.relative_to(workspace)}: {line}")
        shutil.copyfile(resolved, lock)
    return episode_env(where, which)


async def install_app_gems(bus: EventBus, workspace: Path, spec: RubySpec, log_path: Path,
                           redactor: Redactor) -> dict[str, str]:
    """Install the app's gems; the variables for the episode's processes. ServiceFailed naming the cause and fix."""
    return await run_install(bus, SERVICE, f"gems of {spec.gemfile}", log_path, redactor,
                             lambda say: _install(workspace, spec, say), (ruby_gems.GemProblem,), "gems",
                             lambda _env: f"gems of {spec.gemfile} installed")


__all__ = ["SERVICE", "episode_env", "install_app_gems", "planned_env"]
