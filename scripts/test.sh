#!/usr/bin/env bash
# What `make test` and `make drills` (and CI) run: install what is missing, bring up what the tier needs, run it.
# Extra arguments go to pytest (e.g. `scripts/test.sh tests/grading -x`).
#
# Two tiers (pytest marker `drill`, see pyproject.toml):
# - STRIPEBENCH_TIER=quick (the default, `make test`): everything but the long tier; needs no Docker engine and no Ray.
# - STRIPEBENCH_TIER=drills (`make drills`): the long tier: every environment and benchmark folder validated end to
#   end, the real external harnesses, Docker sandboxes, Ray and local batches, the live TUI served to a browser, the
#   kill drills. It installs docker.io, debootstrap and the ray extra when missing, starts dockerd when no engine
#   answers (stopped again afterwards) and builds the base image: scripts/docker-engine.sh. STRIPEBENCH_NO_DOCKER=1
#   leaves the engine and the tests that need it out on purpose (they are reported as skipped).
# - STRIPEBENCH_TIER=all: both in one run.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
PY=$("$PY" -c 'import sys; print(sys.executable)')  # not a version manager's shim (see scripts/setup.sh)
export PYTHON="$PY"  # the same interpreter for setup.sh and docker-engine.sh
tier=${STRIPEBENCH_TIER:-quick}
case "$tier" in
  quick) select=(-m "not drill") ;;
  drills) select=(-m drill) ;;
  all) select=() ;;
  *) echo "test: STRIPEBENCH_TIER must be quick, drills or all, not '$tier'" >&2; exit 2 ;;
esac
# loadgroup: tests marked xdist_group(NAME) share one worker (the batch tests share one session-scoped batch).
pytest=("$PY" -m pytest -n 2 --dist loadgroup --durations=15 "${select[@]}" "$@")

if [ "$tier" = quick ]; then
  bash scripts/setup.sh
  echo "test: the suite without the long tier (make drills runs that)"
  exec "${pytest[@]}"
fi
export STRIPEBENCH_RAY=1  # `stripebench batch --ray` on local clusters (tests/batch/test_batch_ray.py)
if [ "${STRIPEBENCH_NO_DOCKER:-0}" = "1" ]; then
  echo "test: STRIPEBENCH_NO_DOCKER=1: no Docker engine; the Docker sandbox tests are left out on purpose"
  bash scripts/setup.sh
  exec "${pytest[@]}"
fi
STRIPEBENCH_DOCKER=1 bash scripts/setup.sh
exec bash scripts/docker-engine.sh "${pytest[@]}"
