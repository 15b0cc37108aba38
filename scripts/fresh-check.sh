#!/usr/bin/env bash
# `make fresh-check`: the README's set-up on a machine that shares nothing prepared with this one, then a smoke set.
#
# A green `make test` on the machine where the code was written proves little about a newcomer's: that machine has
# the shims, caches and packages earlier runs left behind. This drill starts a container from the offline Debian base
# image (`python -m stripebench_tui images bootstrap`) with only this machine's package-source configuration copied in
# (apt sources and settings, extra CA certificates, the system-wide pip and npm settings), an empty HOME, no caches,
# and a PATH with no version manager and no virtualenv on it. Inside (scripts/fresh-check-inside.sh) it clones the
# committed tree (HEAD, or FRESH_CHECK_REF), makes a new virtualenv that is never put on PATH, so a pip-installed
# command called by name (`ray`, `pytest`, `stripebench`…) is not found, exactly as on a fresh pyenv machine, runs the
# README's set-up through it and then the smoke set. Each step prints what it does and its result; the first failure
# ends the drill with a non-zero exit.
#
# The host needs a Docker engine and the base image: this runs scripts/setup.sh (with docker.io and debootstrap) and
# scripts/docker-engine.sh, which starts dockerd when none answers and stops it afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
PY=$("$PY" -c 'import sys; print(sys.executable)')  # not a version manager's shim (see scripts/setup.sh)
export PYTHON="$PY"

if [ "${1:-}" != "--engine-up" ]; then
  echo "fresh-check: preparing this machine's side: a Docker engine and the offline base image"
  STRIPEBENCH_DOCKER=1 bash scripts/setup.sh
  exec bash scripts/docker-engine.sh bash "$0" --engine-up
fi

ref=${FRESH_CHECK_REF:-HEAD}
image=${STRIPEBENCH_BASE_IMAGE:-stripebench/base:bookworm}
work=$(mktemp -d "${TMPDIR:-/tmp}/stripebench-fresh-XXXXXX")
name="stripebench-fresh-$$"
cleanup() {
  local status=$?
  docker rm -f "$name" >/dev/null 2>&1 || true
  if [ "$status" -ne 0 ] && [ -d "$work/out" ]; then  # what the failing step left (logs, episodes, pytest's tmp)
    rm -rf "$work/origin" "$work/conf"
    echo "fresh-check: failed; its logs and episodes are kept in $work/out"
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The tree a newcomer clones: what is committed at $ref (uncommitted changes are not part of it).
commit=$(git rev-parse --verify "$ref^{commit}")
git clone -q --no-hardlinks . "$work/origin"
git -C "$work/origin" checkout -q --detach "$commit"
echo "fresh-check: the tree under test: $(git log -1 --format='%h %s' "$commit" | cut -c1-100)"

# This machine's package-source configuration, and nothing else of it.
conf="$work/conf"
mkdir -p "$conf/apt/sources.list.d" "$conf/apt/apt.conf.d" "$conf/ca" "$conf/pip"
[ ! -f /etc/apt/sources.list ] || cp /etc/apt/sources.list "$conf/apt/"
find /etc/apt/sources.list.d -maxdepth 1 -type f \( -name '*.list' -o -name '*.sources' \) -exec cp {} "$conf/apt/sources.list.d/" \;
find /etc/apt/apt.conf.d -maxdepth 1 -type f -exec cp {} "$conf/apt/apt.conf.d/" \;
find /usr/local/share/ca-certificates -maxdepth 1 -type f -name '*.crt' -exec cp {} "$conf/ca/" \; 2>/dev/null || true
[ ! -f /etc/pip.conf ] || cp /etc/pip.conf "$conf/pip/pip.conf"
[ ! -d /etc/xdg/pip ] || cp -r /etc/xdg/pip "$conf/pip/xdg"
[ ! -f /etc/npmrc ] || cp /etc/npmrc "$conf/npmrc"
echo "fresh-check: copied in from this machine: $(cd "$conf" && find . -type f | sed 's|^\./||' | sort | tr '\n' ' ')"

# TLS trust settings point at the system bundle, which the container rebuilds with the copied certificates.
tls=()
for var in SSL_CERT_FILE SSL_CERT_DIR REQUESTS_CA_BUNDLE CURL_CA_BUNDLE NODE_EXTRA_CA_CERTS PIP_CERT; do
  [ -z "${!var:-}" ] || tls+=(-e "$var=${!var}")
done

# Published folders for the steps that run them (a checkout of github.com/stripe/ai in STRIPEBENCH_STRIPE_AI, else
# this machine's mirror of it), mounted read-only: the run must not write to them. saas-starter-partial-payments:
# Next.js + PostgreSQL; subscription-gym: a Sinatra/Puma app and an RSpec grader, its gems built from source.
published="$work/published"
mkdir -p "$published"
for folder in saas-starter-partial-payments subscription-gym; do
  if [ -n "${STRIPEBENCH_STRIPE_AI:-}" ] && [ -d "$STRIPEBENCH_STRIPE_AI/benchmarks/$folder" ]; then
    cp -r "$STRIPEBENCH_STRIPE_AI/benchmarks/$folder" "$published/"
  elif [ -f /work/.mirror/stripe+ai/repo/HEAD ]; then
    git --git-dir=/work/.mirror/stripe+ai/repo archive HEAD "benchmarks/$folder" 2>/dev/null | tar -x -C "$published" --strip-components=1
  fi
  if [ -d "$published/$folder" ]; then
    echo "fresh-check: the published folder $folder is mounted read-only at /fresh/published/$folder"
  else
    echo "fresh-check: NO checkout of github.com/stripe/ai (set STRIPEBENCH_STRIPE_AI): the step of $folder is left out"
  fi
done
# The Ruby registry is not reachable here: the gems' public repositories (STRIPEBENCH_GEM_SOURCES, else this
# machine's mirrors) are mounted read-only, and the container builds the gems from them as a newcomer's machine would.
gem_sources=${STRIPEBENCH_GEM_SOURCES:-/work/.mirror}
gem_sources=${gem_sources%%:*}
gems=()
if [ -d "$gem_sources" ]; then
  gems=(-v "$gem_sources:/fresh/gem-sources:ro" -e STRIPEBENCH_GEM_SOURCES=/fresh/gem-sources)
  echo "fresh-check: the gems' public sources in $gem_sources are mounted read-only at /fresh/gem-sources"
else
  echo "fresh-check: no gem sources (set STRIPEBENCH_GEM_SOURCES): the Ruby folder's step needs rubygems.org"
fi

mkdir -p "$work/out"
echo "fresh-check: starting a container from $image (host network, empty HOME, PATH without shims or virtualenvs)"
docker run --rm --name "$name" --init --network host --shm-size 2g \
  -v "$work/origin:/fresh/origin:ro" -v "$conf:/fresh/conf:ro" -v "$work/out:/fresh/out" \
  -v "$published:/fresh/published:ro" "${gems[@]}" \
  -e HOME=/root -e PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin -e LANG=C.UTF-8 \
  -e DEBIAN_FRONTEND=noninteractive "${tls[@]}" \
  "$image" bash /fresh/origin/scripts/fresh-check-inside.sh
