#!/usr/bin/env bash
# Installs everything stripebench-tui needs on a fresh Debian machine (idempotent; fast when already done).
# Runs as root (CI and this workplace) or with sudo available.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

PY=${PYTHON:-python3}
# The interpreter itself rather than a version manager's shim: pyenv's shim re-hashes after every `pip install`,
# and a rehash killed half-way (a test stopping a login shell that was starting does it) leaves a lock that fails
# the next one after a minute. The command's shim is made below, once, when it is missing.
PY=$("$PY" -c 'import sys; print(sys.executable)')

apt_pkgs=(chromium tmux sqlite3 nodejs npm ruby)  # ruby: the Ruby preload test (tests/runtime/test_preload.py)
# PostgreSQL: environments whose app needs it make a cluster of their own per episode (runtime/postgres.py), as the
# published Next.js SaaS-starter folders do; the package's own cluster is not used.
apt_pkgs+=(postgresql)
# `stripebench export --format gif`: agg draws the TUI in DejaVu Sans Mono (its box-drawing borders, ✔ ✘ ◆).
apt_pkgs+=(fonts-dejavu-core)
# Ruby graders and apps of the published folders (envs/ruby_gems.py): bundler, and Debian's gems where their
# versions fit the folders' Gemfiles (the rest are built from their public source); ruby-dev for gems with C
# extensions; netcat, which the galtee graders' grade.sh waits for the server with.
apt_pkgs+=(ruby-dev ruby-bundler ruby-rest-client ruby-byebug netcat-openbsd)
# subscription-gym's server Gemfile: rerun's listen/rb-inotify/ffi, puma's nio4r, sinatra's tilt and mustermann
apt_pkgs+=(ruby-listen ruby-rb-inotify ruby-ffi ruby-ruby2-keywords ruby-nio4r ruby-tilt ruby-mustermann)
# sdk-upgrades-ruby's grader Gemfile (rspec 3.13 without a lock: rspec-expectations' and rspec-mocks' diff-lcs);
# lsof and curl, with which its oracle restarts the server on port 4242 and waits for it
apt_pkgs+=(ruby-diff-lcs lsof curl)
# checkout-gym's server Gemfile: sinatra 3.2 runs on rack 2.2 (the gems built from source are rack 3's)
apt_pkgs+=(ruby-rack)
# The emulator's compile (below) needs a C compiler and this interpreter's headers: a version manager's Python has
# its own; Debian's needs its -dev package.
command -v "${CC:-cc}" >/dev/null || apt_pkgs+=(gcc)
if ! "$PY" -c 'import os, sys, sysconfig; sys.exit(not os.path.isfile(os.path.join(sysconfig.get_paths()["include"], "Python.h")))'; then
  [ "$("$PY" -c 'import sys; print(sys.base_prefix)')" != /usr ] || apt_pkgs+=("python$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')-dev")
fi
# The docker sandbox (`stripebench run --sandbox docker`, tests/docker): a Docker engine and debootstrap for the
# offline base image. Only when asked (`make test` sets it: scripts/test.sh): many machines already have their own Docker.
if [ "${STRIPEBENCH_DOCKER:-0}" = "1" ]; then
  command -v dockerd >/dev/null || apt_pkgs+=(docker.io)
  apt_pkgs+=(debootstrap)
fi
missing=()
for p in "${apt_pkgs[@]}"; do
  if ! dpkg -s "$p" >/dev/null 2>&1; then
    # node/npm may come from elsewhere (nvm, NodeSource): a working binary is enough.
    case "$p" in nodejs) command -v node >/dev/null && continue ;; npm) command -v npm >/dev/null && continue ;; esac
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Always (re)install this checkout: another clone may be installed editable on the same machine (CI clones beside
# the developer's tree), and pip only checks what is already satisfied, so this is quick when nothing changed.
# The emulator is its own distribution (emulator/): installed first, so stripebench-tui's dependency on it is met by
# this checkout's copy rather than looked up in a registry.
echo "setup: pip install -e ./emulator, then -e '.[dev]' (this checkout)"
"$PY" -m pip install -q --disable-pip-version-check --root-user-action=ignore -e ./emulator
"$PY" -m pip install -q --disable-pip-version-check --root-user-action=ignore -e '.[dev]'
# `stripebench batch --ray` (and the suite's Ray tests): the ray extra, only when asked (`make test` asks).
if [ "${STRIPEBENCH_RAY:-0}" = "1" ]; then
  echo "setup: pip install -e '.[ray]'"
  "$PY" -m pip install -q --disable-pip-version-check --root-user-action=ignore -e '.[ray]'
fi
# The emulator's API modules compiled with Cython (emulator/stripebench_emulator/model/compiled.py): only what changed since
# the last build; without a C compiler the emulator runs as plain Python, and says so.
"$PY" -m stripebench_emulator.cython_build || echo "setup: the emulator stays plain Python (the reason is above)"
# asciinema's web player (npm, pinned) into the user cache, for reports that play a recording (`report --cast`):
# inlined into each report from there, never committed here.
"$PY" -m stripebench_tui.formats.player_assets >/dev/null || echo "setup: no web player for recordings in reports (the reason is above)"
# Nothing here or in the tests runs `stripebench` by name (always `python -m stripebench_tui`); the shim is for you.
if ! command -v stripebench >/dev/null && command -v pyenv >/dev/null; then
  pyenv rehash || true  # a fresh pyenv install: make the `stripebench` shim for the README's examples
fi
# Environments' own dependencies are not installed here: each episode gets its environment's cached venv
# (stripebench_tui/runtime/envdeps.py).
