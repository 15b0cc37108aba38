#!/usr/bin/env bash
# Runs a command with a Docker engine and the offline base image available: `scripts/docker-engine.sh CMD ARGS…`.
#
# When an engine answers already (DOCKER_HOST or the default socket) it is used as it is. Otherwise this starts
# `dockerd --iptables=false --bridge=none` (containers use the host network, so it needs no firewall or bridge
# privileges), waits for it, runs CMD and stops it again afterwards. Then `python -m stripebench_tui images bootstrap` makes
# the base image (cached: nothing to do when it exists). A machine where no engine can run (dockerd exits, e.g.
# without privileges) gets one line saying so and exit status 4; set STRIPEBENCH_NO_DOCKER=1 to leave the
# Docker tests out on purpose instead. The exit status is otherwise CMD's.
set -euo pipefail

[ $# -gt 0 ] || { echo "usage: scripts/docker-engine.sh CMD [ARGS…]" >&2; exit 2; }
PY=${PYTHON:-python3}
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
LOG=${STRIPEBENCH_DOCKERD_LOG:-${TMPDIR:-/tmp}/stripebench-dockerd.log}
WAIT=${STRIPEBENCH_DOCKERD_WAIT:-120}  # seconds; dockerd answers in a few, this only ends a hung start

engine_up() { "$PY" -c "import docker; docker.from_env(timeout=5).ping()" >/dev/null 2>&1; }
no_engine() {
  echo "docker: no Docker engine: $1 (log: $LOG); set STRIPEBENCH_NO_DOCKER=1 to run without the Docker tests" >&2
  exit 4
}

dockerd_pid=""
stop_dockerd() {
  [ -n "$dockerd_pid" ] || return 0
  echo "docker: stopping the dockerd started for this run"
  $SUDO kill -TERM "$dockerd_pid" 2>/dev/null || true
  wait "$dockerd_pid" 2>/dev/null || true
}

if ! engine_up; then
  command -v dockerd >/dev/null || no_engine "dockerd is not installed (scripts/setup.sh installs docker.io when STRIPEBENCH_DOCKER=1)"
  args=(--iptables=false --bridge=none)
  [ -z "${DOCKER_HOST:-}" ] || args+=(--host "$DOCKER_HOST")
  [ -z "$SUDO" ] || args+=(--group "$(id -gn)")  # the socket is ours to use without sudo
  echo "docker: no engine answers; starting dockerd ${args[*]} (log: $LOG)"
  $SUDO dockerd "${args[@]}" >"$LOG" 2>&1 &
  dockerd_pid=$!
  trap stop_dockerd EXIT
  trap 'exit 130' INT TERM
  deadline=$((SECONDS + WAIT))
  until engine_up; do
    if ! ps -p "$dockerd_pid" >/dev/null; then
      dockerd_pid=""
      no_engine "dockerd exited: $(grep -v '^\s*$' "$LOG" | tail -n 1 | cut -c1-200)"
    fi
    [ "$SECONDS" -lt "$deadline" ] || no_engine "dockerd did not answer within ${WAIT}s"
    sleep 0.5
  done
fi

"$PY" -m stripebench_tui images bootstrap
set +e
"$@"
status=$?
set -e
exit "$status"
