#!/usr/bin/env bash
# What `make test` (and CI) runs: install what is missing, bring up what the suite needs, run the whole suite.
# Extra arguments go to pytest (e.g. `scripts/test.sh tests/grading -x`).
#
# The suite includes the Docker sandbox tests, so this installs docker.io and debootstrap when missing, starts
# dockerd when no engine answers (stopped again afterwards) and builds the base image: scripts/docker-engine.sh.
# STRIPEBENCH_NO_DOCKER=1 leaves the engine and those tests out on purpose (they are reported as skipped).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
PY=$("$PY" -c 'import sys; print(sys.executable)')  # not a version manager's shim (see scripts/setup.sh)
export PYTHON="$PY"  # the same interpreter for setup.sh and docker-engine.sh
# loadgroup: tests marked xdist_group(NAME) share one worker (the batch tests share one session-scoped batch).
pytest=("$PY" -m pytest -n 2 --dist loadgroup --durations=15 "$@")
# The suite runs `stripebench batch --ray` on a local cluster (tests/batch/test_batch_ray.py): the ray extra.
export STRIPEBENCH_RAY=1

if [ "${STRIPEBENCH_NO_DOCKER:-0}" = "1" ]; then
  echo "test: STRIPEBENCH_NO_DOCKER=1: no Docker engine; the Docker sandbox tests are left out on purpose"
  bash scripts/setup.sh
  exec "${pytest[@]}"
fi
STRIPEBENCH_DOCKER=1 bash scripts/setup.sh
exec bash scripts/docker-engine.sh "${pytest[@]}"
