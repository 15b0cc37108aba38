"""The gems a folder's Gemfile asks for, for an episode: from the Ruby registry, or offline from local sources.

A *bundle* is a Gemfile (and the Gemfile.lock beside it) that a grader or an app runs under ``bundle exec``. It
is made once into stripebench's cache (``<cache>/ruby/bundles/<hash>/``: a copy of the Gemfile, the lock bundler
resolved, and a ``GEM_HOME``), under a cross-process lock, built beside and moved in place only once bundler is
satisfied; every process that needs it gets ``process_env`` (``GEM_HOME``, ``GEM_PATH``, ``BUNDLE_GEMFILE``,
``BUNDLE_FROZEN``), so ``bundle exec rspec`` runs as the folder wrote it, and the folder is never written.

Two paths, chosen by ``mode()`` (``STRIPEBENCH_RUBY_GEMS=registry|local|auto``, default auto: the registry when
rubygems.org answers):

- **registry** — ``bundle install`` as the folder's Dockerfile does: what a user's machine does by default.
- **local** — no registry: the installed gems (Debian's ``ruby-*`` packages, Ruby's default gems) where their
  version fits, and the rest built with ``gem build`` from a git checkout of the gem's public repository at the
  release tag of the version wanted (``SOURCES`` names each gem's repository and tag pattern), into
  ``<cache>/ruby/gems/`` (each built once, under a lock, published atomically); then
  ``bundle install --local``. Which version to build is the one ``Gemfile.lock`` names (the requirement's exact pin
  when the lock has none). ``gem_plan.rb`` (beside this file) walks the requirements.

A checkout is looked up by the gem's name in each directory of ``STRIPEBENCH_GEM_SOURCES`` (``:``-separated):
``<dir>/<gem>``, ``<dir>/<gem>.git``, ``<dir>/<owner>+<repo>/repo`` (a mirror's layout) or ``<dir>/<repo>``; then
in this machine's mirror directory (``MIRROR_ROOT``). Served to bundler as installed gems rather than a gem server
on a port: ``bundle install --local`` takes Debian's installed gems and ours alike with the folder's Gemfile
unchanged (a mirror would need every gem, Debian's too, as a ``.gem`` file, and a server process per episode).

The agent, told by a task to run ``bundle install`` (or ``bundle update``, ``bundle lock``), runs it without
``--local``: bundler 2.3 (Debian's) has no setting for that (``prefer_local`` came later), but it follows a mirror.
Offline the episode's processes get ``no_registry_env``: every rubygems source mirrored to an index in the cache that
lists no gems (``empty_index``, a directory read through ``file://``), so bundler resolves against the installed
gems alone, as ``--local`` does, leaves ``remote: https://rubygems.org/`` in the lock, and for a gem not here says
at once "Could not find gem … in rubygems repository https://rubygems.org/ or installed locally".
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from stripebench_tui.envs.deps import cache_root
from stripebench_tui.shared_cache import ensure_entry, locked

SOURCES_VAR = "STRIPEBENCH_GEM_SOURCES"
MODE_VAR = "STRIPEBENCH_RUBY_GEMS"
MIRROR_ROOT = Path("/work/.mirror")  # this machine's mirrors of public repositories (<owner>+<name>/repo)
REGISTRY_HOST = "rubygems.org"
PLANNER = Path(__file__).resolve().parent / "ruby" / "gem_plan.rb"
TIMEOUT = 600.0


Say = Callable[[str], None]


class GemProblem(Exception):
    """Why the gems cannot be had, with the fix (one line)."""


@dataclass(frozen=True)
class GemSource:
    """Where a gem's public source is, and how its release tags are named."""

    repo: str  # owner/name on GitHub
    subdir: str = ""  # where its gemspec is, in a repository holding several gems
    tags: tuple[str, ...] = ("v{version}", "{version}")
    # A file whose version string its release process replaces with the tag's (the tree says a placeholder).
    version_file: str = ""


def _rspec(name: str) -> GemSource:
    return GemSource("rspec/rspec", subdir=name, tags=(f"{name}-v{{version}}",))


SOURCES: dict[str, GemSource] = {
    "stripe": GemSource("stripe/stripe-ruby"),
    "dotenv": GemSource("bkeepers/dotenv"),
    "rspec": GemSource("rspec/rspec", subdir="rspec", tags=("rspec-metagem-v{version}", "rspec-v{version}")),
    **{name: _rspec(name) for name in ("rspec-core", "rspec-expectations", "rspec-mocks", "rspec-support")},
    "rspec-github": GemSource("Drieam/rspec-github", tags=("{version}", "v{version}"),
                              version_file="lib/rspec/github/version.rb"),
    "rest-client": GemSource("rest-client/rest-client"),
    "byebug": GemSource("deivid-rodriguez/byebug"),
    "sinatra": GemSource("sinatra/sinatra"),
    "rack-protection": GemSource("sinatra/sinatra", subdir="rack-protection"),
    "sinatra-contrib": GemSource("sinatra/sinatra", subdir="sinatra-contrib"),
    "mustermann": GemSource("sinatra/mustermann", subdir="mustermann"),
    "rack": GemSource("rack/rack"),
    "rackup": GemSource("rack/rackup"),
    "rack-session": GemSource("rack/rack-session"),
    "puma": GemSource("puma/puma"),
    "nio4r": GemSource("socketry/nio4r"),
    "tilt": GemSource("jeremyevans/tilt"),
    "webrick": GemSource("ruby/webrick"),
    "json": GemSource("ruby/json"),
    "rerun": GemSource("alexch/rerun"),
    "logger": GemSource("ruby/logger"),
    "base64": GemSource("ruby/base64"),
    # rspec-expectations' and rspec-mocks' diff-lcs: a grader's lock may pin one newer than Debian's ruby-diff-lcs
    "diff-lcs": GemSource("halostatue/diff-lcs"),
}


@dataclass(frozen=True)
class GemBundle:
    """A Gemfile to install, with the lock it comes with (the versions to build) and whether bundler uses it."""

    gemfile: Path
    lockfile: Path | None = None
    use_lock: bool = False  # the folder's Dockerfile copies the lock too: bundler resolves with it
    # (name, version) of gems installed beside the bundle, as a Dockerfile prefetches them (the SDK an upgrade task
    # moves to): a later `bundle install` of the changed Gemfile finds them here (offline through no_registry_env).
    extra: tuple[tuple[str, str], ...] = ()

    def key(self, mode: str) -> str:
        text = self.gemfile.read_bytes()
        if mode == "registry" and self.use_lock and self.lockfile is not None and self.lockfile.is_file():
            text += b"\0" + self.lockfile.read_bytes()
        if self.extra:
            text += b"\0" + " ".join(f"{name}={version}" for name, version in self.extra).encode()
        return hashlib.sha256(text + f"\0{mode}\0{ruby_version()}".encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Need:
    """One requirement of the bundle and where it is met (``gem_plan.rb``'s rows)."""

    name: str
    requirement: str
    via: str
    have: str = ""  # an installed gem's version
    origin: str = ""  # where that is installed ("default" for Ruby's own)
    built: str = ""  # a version already built into the cache
    build: str = ""  # the version to build
    why: str = ""
    installed: tuple[str, ...] = ()  # versions installed that do not fit

    @property
    def version(self) -> str:
        return self.have or self.built or self.build


@dataclass(frozen=True)
class Plan:
    ruby: str
    bundler: str
    needs: tuple[Need, ...] = field(default_factory=tuple)

    def to_build(self) -> list[Need]:
        return [n for n in self.needs if n.build or n.built]

    def unmet(self) -> list[Need]:
        return [n for n in self.needs if not n.version]


def bundle_of(folder: Path, gemfile: str, lockfile: str | None, use_lock: bool) -> GemBundle:
    """The bundle of a folder's Gemfile (paths relative to the folder)."""
    return GemBundle(folder / gemfile, folder / lockfile if lockfile else None, use_lock=use_lock)


# ---- this machine ----

@functools.cache
def ruby_version() -> str:
    """``ruby -e 'print RUBY_VERSION'``, "" without Ruby."""
    ruby = shutil.which("ruby")
    if ruby is None:
        return ""
    try:
        return subprocess.run([ruby, "-e", "print RUBY_VERSION"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


@functools.cache
def _default_gem_path() -> str:
    """Ruby's own gem path (Debian's gems are on it), without GEM_HOME/GEM_PATH of ours."""
    env = {k: v for k, v in os.environ.items() if k not in ("GEM_HOME", "GEM_PATH")}
    done = subprocess.run(["ruby", "-e", 'print Gem.default_path.join(":")'], capture_output=True, text=True,
                          timeout=30, env=env)
    return done.stdout.strip()


def _tools_missing() -> str:
    """"" when ruby, gem, bundle and git are here, else the fix."""
    if shutil.which("ruby") is None or shutil.which("gem") is None:
        return "Ruby not found: apt-get install ruby ruby-dev"
    if shutil.which("bundle") is None:
        return "Bundler not found: apt-get install ruby-bundler"
    if shutil.which("git") is None:
        return "git not found: apt-get install git"
    return ""


def registry_reachable(timeout: float = 3.0) -> bool:
    try:
        with socket.create_connection((REGISTRY_HOST, 443), timeout=timeout):
            return True
    except OSError:
        return False


def mode() -> tuple[str, str]:
    """("registry" or "local", why)."""
    wanted = os.environ.get(MODE_VAR, "auto").strip().lower() or "auto"
    if wanted in ("registry", "local"):
        return wanted, f"{MODE_VAR}={wanted}"
    if wanted != "auto":
        raise GemProblem(f"{MODE_VAR}={wanted!r}: say registry, local or auto")
    if registry_reachable():
        return "registry", f"{REGISTRY_HOST} answers"
    return "local", f"{REGISTRY_HOST} is not reachable"


# ---- gem sources ----

def _source_dirs() -> list[Path]:
    dirs = [Path(p).expanduser() for p in os.environ.get(SOURCES_VAR, "").split(os.pathsep) if p.strip()]
    return dirs + [MIRROR_ROOT]


def _is_repo(path: Path) -> bool:
    return path.is_dir() and ((path / "HEAD").is_file() or (path / ".git").exists())


def find_checkout(name: str) -> Path | None:
    """A git repository holding ``name``'s source (see the module docstring), or None."""
    source = SOURCES.get(name)
    owner, _, repo = source.repo.partition("/") if source else ("", "", "")
    for base in _source_dirs():
        candidates = [base / name, base / f"{name}.git"]
        if source:
            candidates += [base / f"{owner}+{repo}" / "repo", base / repo, base / f"{repo}.git"]
        for candidate in candidates:
            if _is_repo(candidate):
                return candidate
    return None


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=120)


def find_tag(name: str, version: str, repo: Path) -> str | None:
    source = SOURCES.get(name, GemSource(""))
    for pattern in source.tags:
        tag = pattern.format(version=version)
        if _git(repo, "rev-parse", "--verify", "-q", f"refs/tags/{tag}^{{commit}}").returncode == 0:
            return tag
    return None


def gems_dir() -> Path:
    return cache_root() / "ruby" / "gems"


def built_gem(name: str, version: str) -> Path:
    return gems_dir() / f"{name}-{version}.gem"


def source_fix(name: str) -> str:
    """How to give ``name`` a checkout."""
    source = SOURCES.get(name)
    where = f"https://github.com/{source.repo}" if source else f"{name}'s public repository"
    return (f"clone {where} as {name} into a directory named by {SOURCES_VAR}"
            + ("" if source else f" (and add {name} to SOURCES in {Path(__file__).name}: its tag pattern)"))


def build(name: str, version: str, say: Callable[[str], None] = print) -> Path:
    """``name``-``version``.gem built from its checkout at the release tag (once; cached). GemProblem on failure."""
    out = built_gem(name, version)
    if out.is_file():
        return out
    with locked(gems_dir() / ".locks" / f"{name}-{version}"):
        if out.is_file():  # another process built it meanwhile
            return out
        repo = find_checkout(name)
        if repo is None:
            raise GemProblem(f"gem {name} {version} must be built, but there is no checkout of it: {source_fix(name)}")
        tag = find_tag(name, version, repo)
        if tag is None:
            looked = ", ".join(p.format(version=version) for p in SOURCES.get(name, GemSource("")).tags)
            raise GemProblem(f"gem {name} {version}: {repo} has no release tag for it (looked for {looked})")
        source = SOURCES.get(name, GemSource(""))
        say(f"building {name} {version} from {repo} at {tag}")
        staging = Path(tempfile.mkdtemp(prefix=f".{name}-{version}-", dir=gems_dir()))
        try:
            # a clone, not an export: gemspecs list their files with `git ls-files`
            cloned = subprocess.run(["git", "clone", "-q", "--depth", "1", "--branch", tag, f"file://{repo.resolve()}",
                                     str(staging / "src")], capture_output=True, text=True, timeout=TIMEOUT)
            if cloned.returncode != 0:
                raise GemProblem(f"gem {name} {version}: git clone of {repo} at {tag} failed: {_last_line(cloned.stderr)}")
            where = staging / "src" / source.subdir
            if source.version_file:
                _stamp_version(where / source.version_file, version)
            env = {k: v for k, v in os.environ.items() if not k.startswith(("GEM_", "BUNDLE_", "RUBYOPT"))}
            made = subprocess.run(["gem", "build", f"{name}.gemspec"], cwd=where, capture_output=True, text=True,
                                  timeout=TIMEOUT, env=env, stdin=subprocess.DEVNULL)
            produced = where / out.name
            if made.returncode != 0 or not produced.is_file():
                found = sorted(p.name for p in where.glob("*.gem"))
                detail = f"it made {', '.join(found)}" if found else _last_line(made.stderr or made.stdout)
                raise GemProblem(f"gem build of {name} at {tag} did not make {out.name}: {detail}")
            os.replace(produced, out)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return out


def _stamp_version(path: Path, version: str) -> None:
    text = path.read_text(encoding="utf-8")
    stamped, count = re.subn(r"""(VERSION\s*=\s*)(['"])[^'"]*\2""", rf"\g<1>'{version}'", text, count=1)
    if not count:
        raise GemProblem(f"{path}: no VERSION = '…' to set to {version}")
    path.write_text(stamped, encoding="utf-8")


def _last_line(text: str) -> str:
    return next((ln.strip() for ln in reversed(text.splitlines()) if ln.strip()), "no output")


# ---- planning and installing a bundle ----

def plan(bundle: GemBundle, home: Path | None = None) -> Plan:
    """Where each requirement of ``bundle`` is met (installed gems, ``home``, the built cache) or what to build."""
    missing = _tools_missing()
    if missing:
        raise GemProblem(missing)
    if not bundle.gemfile.is_file():
        raise GemProblem(f"{bundle.gemfile}: no such Gemfile")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GEM_", "BUNDLE_", "RUBYOPT"))}
    if home is not None:
        env["GEM_HOME"] = str(home)
        env["GEM_PATH"] = os.pathsep.join([str(home), _default_gem_path()])
    lock = str(bundle.lockfile) if bundle.lockfile is not None and bundle.lockfile.is_file() else "-"
    done = subprocess.run(["ruby", str(PLANNER), str(bundle.gemfile), lock, str(gems_dir())], capture_output=True,
                          text=True, timeout=120, env=env, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise GemProblem(f"cannot read {bundle.gemfile}: {_last_line(done.stderr)}")
    data = json.loads(done.stdout)
    needs = tuple(Need(name=r["name"], requirement=r["requirement"], via=r["via"], have=r.get("have", ""),
                       origin=r.get("from", ""), built=r.get("built", ""), build=r.get("build", ""), why=r.get("why", ""),
                       installed=tuple(r.get("installed", ()))) for r in data["gems"])
    return Plan(ruby=data["ruby"], bundler=data["bundler"], needs=needs)


def bundles_dir() -> Path:
    return cache_root() / "ruby" / "bundles"


def bundle_dir(bundle: GemBundle, which: str) -> Path:
    return bundles_dir() / bundle.key(which)


def process_env(where: Path, env_path: str | None = None) -> dict[str, str]:
    """What a process running under the bundle made at ``where`` gets."""
    home = where / "home"
    path = env_path if env_path is not None else os.environ.get("PATH", "")
    return {"GEM_HOME": str(home), "GEM_PATH": os.pathsep.join([str(home), _default_gem_path()]),
            "BUNDLE_GEMFILE": str(where / "Gemfile"), "BUNDLE_FROZEN": "true",
            "PATH": os.pathsep.join([str(home / "bin"), path]) if path else str(home / "bin")}


def ensure(bundle: GemBundle, say: Callable[[str], None] = print) -> Path:
    """The bundle's directory in the cache, made the first time (see the module docstring). GemProblem on failure."""
    missing = _tools_missing()
    if missing:
        raise GemProblem(missing)
    which, why = mode()
    final = bundle_dir(bundle, which)
    if (final / "complete").is_file():
        return final
    with locked(bundles_dir() / ".locks" / final.name):
        if (final / "complete").is_file():
            return final
        say(f"gems of {bundle.gemfile} from {'the registry' if which == 'registry' else 'local sources'} ({why})")
        staging = Path(tempfile.mkdtemp(prefix=f".{final.name}-", dir=bundles_dir()))
        try:
            shutil.copyfile(bundle.gemfile, staging / "Gemfile")
            # Offline the lock only names the versions to build: bundler resolves the Gemfile against what is here
            # (the installed gems' versions may differ from the lock's; lock_differences lists them).
            if which == "registry" and bundle.use_lock and bundle.lockfile is not None and bundle.lockfile.is_file():
                shutil.copyfile(bundle.lockfile, staging / "Gemfile.lock")
            home = staging / "home"
            home.mkdir()
            if which == "local":
                _install_local(bundle, home, say)
            env = {**{k: v for k, v in os.environ.items() if not k.startswith(("GEM_", "BUNDLE_", "RUBYOPT"))},
                   **process_env(staging), "BUNDLE_FROZEN": "false"}
            argv = ["bundle", "install"] + (["--local"] if which == "local" else [])
            done = subprocess.run(argv, cwd=staging, capture_output=True, text=True, timeout=TIMEOUT, env=env,
                                  stdin=subprocess.DEVNULL)
            for line in done.stdout.splitlines():
                if line.strip():
                    say(line.strip())
            if done.returncode != 0:
                raise GemProblem(f"bundle install{' --local' if which == 'local' else ''} failed: "
                                 f"{_last_line(done.stderr or done.stdout)}")
            for line in lock_differences(bundle, staging / "Gemfile.lock"):
                say(line)
            for name, version in bundle.extra:
                _install_extra(name, version, which, home, say)
            (staging / "complete").write_text(why + "\n")
            try:
                staging.rename(final)
            except OSError:
                if not (final / "complete").is_file():
                    raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return final


def parse_extra(specs: list[str]) -> tuple[tuple[str, str], ...]:
    """("name", "version") of each "name version" (``RubySpec.prefetch``); GemProblem for another form."""
    out = []
    for spec in specs:
        parts = spec.split()
        if len(parts) != 2 or not re.match(r"^\d[0-9A-Za-z.]*$", parts[1]):
            raise GemProblem(f"prefetch {spec!r}: say a gem and its exact version, e.g. 'stripe 15.5.0'")
        out.append((parts[0], parts[1]))
    return tuple(out)


def _install_extra(name: str, version: str, which: str, home: Path, say: Callable[[str], None]) -> None:
    """``name`` ``version`` into ``home`` beside the bundle: from the registry, else built from its checkout."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GEM_", "BUNDLE_", "RUBYOPT"))}
    argv = ["gem", "install", "--no-document", "--install-dir", str(home)]
    if which == "registry":
        argv += [name, "-v", version]
    else:
        argv += ["--local", "--ignore-dependencies", str(build(name, version, say))]
    ran = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, env=env, stdin=subprocess.DEVNULL)
    if ran.returncode != 0:
        raise GemProblem(f"gem install {name} {version} (prefetched) failed: {_last_line(ran.stderr or ran.stdout)}")
    say(f"{name} {version} installed beside the bundle (prefetched)")


def _install_local(bundle: GemBundle, home: Path, say: Callable[[str], None]) -> None:
    """Build what nothing installed fits, and install it into ``home``, until the plan needs nothing more."""
    done: set[str] = set()
    for _ in range(20):  # a built gem's own dependencies may ask for more
        found = plan(bundle, home)
        unmet = found.unmet()
        if unmet:
            first = unmet[0]
            have = f" (installed: {', '.join(first.installed)})" if first.installed else ""
            raise GemProblem(f"gem {first.name} {first.requirement} (for {first.via}): {first.why}{have}")
        todo = [n for n in found.to_build() if f"{n.name}-{n.version}" not in done]
        if not todo:
            return
        for need in todo:
            gem = build(need.name, need.version, say)
            env = {k: v for k, v in os.environ.items() if not k.startswith(("GEM_", "BUNDLE_", "RUBYOPT"))}
            ran = subprocess.run(["gem", "install", "--local", "--ignore-dependencies", "--no-document",
                                  "--install-dir", str(home), str(gem)], capture_output=True, text=True,
                                 timeout=TIMEOUT, env=env, stdin=subprocess.DEVNULL)
            if ran.returncode != 0:
                raise GemProblem(f"gem install {gem.name} failed: {_last_line(ran.stderr or ran.stdout)}")
            done.add(f"{need.name}-{need.version}")
    raise GemProblem(f"{bundle.gemfile}: the gems' dependencies did not settle after 20 rounds")


def _locked_versions(path: Path | None) -> dict[str, str]:
    if path is None or not path.is_file():
        return {}
    found: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        m = re.match(r"^    ([A-Za-z0-9_.-]+) \(([^)]+)\)$", line)  # a spec line of GEM/specs (4 spaces)
        if m:
            found[m.group(1)] = m.group(2).split("-")[0]
    return found


def lock_differences(bundle: GemBundle, resolved: Path) -> list[str]:
    """One line per gem whose resolved version is not the folder's Gemfile.lock's, saying why."""
    theirs, ours = _locked_versions(bundle.lockfile), _locked_versions(resolved)
    pinned = _pins(bundle.gemfile)
    out = []
    for name in sorted(set(theirs) | set(ours)):
        a, b = theirs.get(name), ours.get(name)
        if a == b:
            continue
        if b is None:
            out.append(f"{name}: Gemfile.lock has {a}; this resolution needs none")
        elif a is None:
            out.append(f"{name} {b}: not in Gemfile.lock (an installed gem's dependency)")
        else:
            reason = ("the Gemfile pins it" if name in pinned else "the Gemfile does not pin it"
                      + (" and, offline, bundler resolves it against what is here" if bundle.use_lock
                         else " and bundler resolved it without the lock"))
            out.append(f"{name} {b} where Gemfile.lock has {a}: the installed one fits ({reason})")
    return out


def _pins(gemfile: Path) -> set[str]:
    text = gemfile.read_text(encoding="utf-8", errors="replace") if gemfile.is_file() else ""
    return set(re.findall(r"""^\s*gem\s+['"]([^'"]+)['"]\s*,\s*['"][=\d]""", text, re.M))


# ---- the agent's bundler, offline ----

MIRROR_VAR = "BUNDLE_MIRROR__ALL"  # bundler's mirror.all: where every rubygems source is fetched from
EMPTY_LIST = b"\x04\x08[\x00"  # Marshal.dump([]): an index's list of gems, with none in it
INDEX_FILES = ("specs.4.8", "latest_specs.4.8", "prerelease_specs.4.8")  # what `gem generate_index` writes


def empty_index() -> Path:
    """A gem index listing no gems, in the cache (built once across processes: ``shared_cache.ensure_entry``)."""
    def build(target: Path) -> None:
        target.mkdir(parents=True)
        for name in INDEX_FILES:
            (target / name).write_bytes(EMPTY_LIST)
            (target / f"{name}.gz").write_bytes(gzip.compress(EMPTY_LIST, mtime=0))

    return ensure_entry(cache_root() / "ruby" / "empty-index", build)


def no_registry_env() -> dict[str, str]:
    """Offline, for the agent's processes: a plain ``bundle install`` resolves from the installed gems (see the module
    docstring)."""
    return {MIRROR_VAR: empty_index().as_uri()}


# ---- for doctor and envs --path ----

def describe(bundle: GemBundle | None = None) -> list[tuple[bool, str]]:
    """(ready, one line) checks: the tools, the path an episode takes, and for ``bundle`` what comes from where and
    what is missing, with the fix."""
    missing = _tools_missing()
    if missing:
        return [(False, missing)]
    try:
        which, why = mode()
    except GemProblem as exc:
        return [(False, str(exc))]
    head = f"Ruby {ruby_version()}; gems from {'the registry' if which == 'registry' else 'local sources'} ({why})"
    if bundle is None:
        return [(True, head)]
    if (bundle_dir(bundle, which) / "complete").is_file():
        return [(True, f"{head}: {bundle.gemfile.name} installed in {bundle_dir(bundle, which)}")]
    if which == "registry":
        return [(True, f"{head}: {bundle.gemfile.name} installed on first use with bundle install")]
    try:
        found = plan(bundle)
    except GemProblem as exc:
        return [(False, f"{head}: {exc}")]
    out: list[tuple[bool, str]] = []
    debian = [f"{n.name} {n.have}" for n in found.needs if n.have and n.origin != "default"]
    if debian:
        out.append((True, f"{head}: installed here: {', '.join(debian)}"))
    for need in found.needs:
        if need.built:
            out.append((True, f"gem {need.name} {need.built}: built (cached)"))
        elif need.build:
            repo = find_checkout(need.name)
            tag = find_tag(need.name, need.build, repo) if repo is not None else None
            if repo is None:
                out.append((False, f"gem {need.name} {need.build} (for {need.via}): no checkout: {source_fix(need.name)}"))
            elif tag is None:
                out.append((False, f"gem {need.name} {need.build}: {repo} has no release tag for it: fetch its tags"))
            else:
                out.append((True, f"gem {need.name} {need.build}: built on first use from {repo} at {tag}"))
        elif not need.version:
            out.append((False, f"gem {need.name} {need.requirement} (for {need.via}): {need.why}"))
    return out or [(True, head)]


__all__ = ["MIRROR_VAR", "GemBundle", "GemProblem", "GemSource", "MODE_VAR", "SOURCES", "SOURCES_VAR", "Say", "build",
           "bundle_of", "describe", "empty_index", "ensure", "find_checkout", "lock_differences", "mode", "no_registry_env",
           "parse_extra", "plan", "process_env"]
