#!/usr/bin/env bash
# The fresh-machine drill's inside (scripts/fresh-check.sh starts it in a new container): the README's set-up with a
# new virtualenv that is never on PATH, then the smoke set. Prints each step and its result; stops at the first failure.
set -uo pipefail

VENV=/opt/stripebench-venv
PY=$VENV/bin/python
SRC=/root/stripebench-tui
LOGS=/fresh/out  # the host keeps it when a step fails
mkdir -p "$LOGS"
steps=0
started=$SECONDS

# step TITLE CMD…: runs CMD, its output indented; on failure the drill ends here.
step() {
  local title=$1 t0=$SECONDS status
  shift
  steps=$((steps + 1))
  echo "fresh-check: [$steps] $title"
  echo "fresh-check:     \$ $*"
  "$@" 2>&1 | sed -u 's/^/    | /'
  status=${PIPESTATUS[0]}
  if [ "$status" -ne 0 ]; then
    echo "fresh-check: [$steps] FAILED (exit $status after $((SECONDS - t0)) s): $title"
    exit 1
  fi
  echo "fresh-check: [$steps] ok ($((SECONDS - t0)) s)"
}

package_sources() {
  rm -f /etc/apt/sources.list /etc/apt/sources.list.d/*  # the image's own (debootstrap's) would duplicate the host's
  cp -r /fresh/conf/apt/. /etc/apt/
  if compgen -G "/fresh/conf/ca/*.crt" >/dev/null; then
    cp /fresh/conf/ca/*.crt /usr/local/share/ca-certificates/
    update-ca-certificates 2>&1 | grep -v '^rehash: warning' || true
  fi
  [ ! -f /fresh/conf/pip/pip.conf ] || cp /fresh/conf/pip/pip.conf /etc/pip.conf
  [ ! -d /fresh/conf/pip/xdg ] || { mkdir -p /etc/xdg && cp -r /fresh/conf/pip/xdg /etc/xdg/pip; }
  [ ! -f /fresh/conf/npmrc ] || cp /fresh/conf/npmrc /etc/npmrc
  ls -R /etc/apt/sources.list* /usr/local/share/ca-certificates
}

# What the README assumes a newcomer has: git to clone, make to run the two commands.
newcomer_tools() {
  apt-get update -qq && apt-get install -y -qq --no-install-recommends git make >/dev/null && git --version && make --version | sed -n 1p  # sed reads to the end: head would stop make with SIGPIPE (exit 141 under pipefail)
}

nothing_by_name() {
  # The premise of the drill: no pip-installed command can be found by name, so any place that calls one fails.
  local name found=0
  echo "PATH=$PATH"
  for name in stripebench ray pytest pip uvicorn playwright; do
    if command -v "$name" >/dev/null; then echo "found on PATH: $(command -v "$name")"; found=1; fi
  done
  [ "$found" -eq 0 ] && echo "none of stripebench, ray, pytest, pip, uvicorn, playwright is on PATH"
}

installed() {
  "$PY" -m pip list --format=freeze --disable-pip-version-check > "$LOGS/pip-freeze.txt"
  echo "$(wc -l < "$LOGS/pip-freeze.txt") Python packages in $VENV, among them:"
  grep -iE '^(stripebench-tui|stripebench-emulator|textual|stripe|playwright|ray|pytest|cython|starlette|uvicorn)==' "$LOGS/pip-freeze.txt"
  "$PY" -c 'from stripebench_emulator.model.compiled import describe; print("emulator:", describe())'
  dpkg-query -W -f '${Package} ${Version}\n' chromium nodejs npm ruby tmux sqlite3 2>/dev/null
}

# A local Ray cluster started with Ray's own command from the virtualenv's bin directory (as a user of
# `--ray ADDRESS` would), a two-episode batch on it, its report, and the cluster stopped again.
ray_batch() {
  local port=6390 status
  "$VENV/bin/ray" start --head --node-ip-address 127.0.0.1 --port "$port" --num-cpus 2 --include-dashboard false \
    --disable-usage-stats >"$LOGS/ray-start.log" 2>&1 || { tail -20 "$LOGS/ray-start.log"; return 1; }
  echo "ray: a local cluster at 127.0.0.1:$port"
  "$PY" -m stripebench_tui batch bookings-payments --agents oracle --runs 2 --ray "127.0.0.1:$port" --out "$LOGS/sweep"
  status=$?
  [ "$status" -ne 0 ] || "$PY" -m stripebench_tui batch report "$LOGS/sweep" || status=$?
  "$VENV/bin/ray" stop --force >/dev/null 2>&1
  return "$status"
}

echo "fresh-check: inside $(. /etc/os-release && echo "$PRETTY_NAME"), $(python3 --version), HOME=$HOME (empty: $(ls -A "$HOME" | wc -l) entries)"
step "package sources copied from the host" package_sources
step "git and make (what the README assumes)" newcomer_tools
step "clone the tree" git clone -q /fresh/origin "$SRC"
cd "$SRC" || exit 1
step "a new virtualenv, not on PATH" python3 -m venv "$VENV"
step "the README's set-up (make setup, as make run and make test run it)" env PYTHON="$PY" make setup
# Every module of the README's test command is imported the way `make test` collects it, on what make setup
# installed and nothing more (a module that imported Ray at its top broke a fresh machine's `make test` this way).
step "make test's selection collects on the set-up alone" \
  "$PY" -m pytest -p no:cacheprovider -q --collect-only -m "not drill" --basetemp="$LOGS/pytest-collect"
step "the ray extra (as make drills installs it)" env PYTHON="$PY" STRIPEBENCH_RAY=1 make setup
step "what was installed" installed
step "no pip-installed command on PATH" nothing_by_name
step "stripebench doctor" "$PY" -m stripebench_tui doctor --no-docker
step "stripebench envs" "$PY" -m stripebench_tui envs
step "stripebench replay --summary of a sample" "$PY" -m stripebench_tui replay replays/checkout-migration-oracle --summary
step "stripebench validate bookings-payments" "$PY" -m stripebench_tui validate bookings-payments
step "the main job, headless (make run ARGS=--headless)" env PYTHON="$PY" make run ARGS=--headless
# A published folder (read-only): its own PostgreSQL cluster, pnpm and the app's packages from nothing, next dev on
# this Node, our oracle through the app's pages in Chromium, the folder's own grader.
if [ -d /fresh/published/saas-starter-partial-payments ]; then
  step "a published Next.js + PostgreSQL folder, from nothing (saas-starter-partial-payments, the oracle)" \
    "$PY" -m stripebench_tui run /fresh/published/saas-starter-partial-payments --headless --agent oracle \
    --episode-dir "$LOGS/saas-starter"
fi
# A published Ruby folder (read-only): the Sinatra/Puma server's and the RSpec grader's gems from nothing (Debian's
# where they fit, the rest built from the mounted public sources), our oracle, the folder's own grader.
if [ -d /fresh/published/subscription-gym ]; then
  step "a published Sinatra + RSpec folder, gems from nothing (subscription-gym, the oracle)" \
    "$PY" -m stripebench_tui run /fresh/published/subscription-gym --headless --agent oracle \
    --episode-dir "$LOGS/subscription-gym"
fi
step "a two-episode batch on a local Ray cluster" ray_batch
step "the suite's Ray tests (they start clusters of their own)" \
  "$PY" -m pytest -p no:cacheprovider -q --basetemp="$LOGS/pytest-ray" tests/batch/test_batch_ray.py
# Debian's Python is older than the one the suite usually runs on (3.11.2: no tarfile filters, for one): the quick
# tiers of the suite on it.
step "the suite's quick tiers on Debian's $(python3 --version)" \
  "$PY" -m pytest -p no:cacheprovider -q -n 2 --basetemp="$LOGS/pytest-quick" \
  -m "not slow and not browser and not node and not docker" \
  tests/core tests/formats tests/findings emulator/tests tests/emulator tests/test_archives.py tests/runtime/test_python_on_path.py
echo "fresh-check: all $steps steps passed in $((SECONDS - started)) s"
