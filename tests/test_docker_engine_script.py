"""scripts/docker-engine.sh, which `make test` runs the suite through: an engine for the Docker tests, or one clear line.

A stand-in `dockerd` (an HTTP server on a unix socket answering what docker-py's ping asks) and a stand-in
interpreter as $PYTHON (it logs `-m stripebench_tui …` and runs anything else with the real one) let these run
anywhere without touching the machine's real engine.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "docker-engine.sh"

FAKE_ENGINE = '''
import json, os, signal, sys
from http.server import BaseHTTPRequestHandler
from socketserver import UnixStreamServer

LOG = os.environ["FAKE_DOCKERD_LOG"]

def note(line):
    with open(LOG, "a") as fh:
        fh.write(line + "\\n")

class Engine(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        body = json.dumps({"ApiVersion": "1.47", "Version": "28.0"}).encode() if "version" in self.path else b"OK"
        self.send_response(200)
        self.send_header("Api-Version", "1.47")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

if os.environ.get("FAKE_DOCKERD") == "fail":
    print("failed to start daemon: Error initializing network controller: permission denied", file=sys.stderr)
    sys.exit(1)
host = sys.argv[sys.argv.index("--host") + 1]
note("started " + " ".join(sys.argv[1:]))
server = UnixStreamServer(host.removeprefix("unix://"), Engine)
def stop(*_):
    note("stopped")
    os._exit(0)
signal.signal(signal.SIGTERM, stop)
server.serve_forever()
'''


@pytest.fixture
def machine(tmp_path: Path) -> dict[str, str]:
    """PATH with the stand-ins first, DOCKER_HOST on a socket of our own, the logs they write."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "dockerd").write_text(f"#!{sys.executable}\n" + FAKE_ENGINE)
    (bin_dir / "python").write_text(textwrap.dedent(f"""\
        #!/bin/sh
        if [ "$1" = "-m" ] && [ "$2" = "stripebench_tui" ]; then
          shift 2
          echo "stripebench $*" >> {tmp_path / 'calls.log'}
          exit 0
        fi
        exec {sys.executable} "$@"
        """))
    for f in bin_dir.iterdir():
        f.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", PYTHON=str(bin_dir / "python"),
               DOCKER_HOST=f"unix://{tmp_path / 'engine.sock'}", FAKE_DOCKERD_LOG=str(tmp_path / "dockerd.log"),
               STRIPEBENCH_DOCKERD_LOG=str(tmp_path / "dockerd.out"))
    return env


def run(env: dict[str, str], *cmd: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), *cmd], env=env, capture_output=True, text=True, timeout=120)


def lines(path: str | Path) -> list[str]:
    p = Path(path)
    return p.read_text().splitlines() if p.exists() else []


def test_without_an_engine_it_starts_dockerd_builds_the_image_runs_the_command_and_stops_dockerd(machine, tmp_path):
    done = run(machine, "sh", "-c", f"echo suite ran >> {tmp_path / 'calls.log'}; exit 3")
    assert done.returncode == 3, done.stderr  # the command's own status
    started, stopped = lines(machine["FAKE_DOCKERD_LOG"])
    assert started == f"started --iptables=false --bridge=none --host {machine['DOCKER_HOST']}" and stopped == "stopped"
    assert lines(tmp_path / "calls.log") == ["stripebench images bootstrap", "suite ran"]
    assert "starting dockerd" in done.stdout and "stopping the dockerd" in done.stdout


def test_an_engine_that_answers_already_is_used_and_left_running(machine, tmp_path):
    socket_path = Path(machine["DOCKER_HOST"].removeprefix("unix://"))
    theirs = subprocess.Popen([str(tmp_path / "bin" / "dockerd"), "--host", machine["DOCKER_HOST"]],
                              env=dict(machine, FAKE_DOCKERD_LOG=str(tmp_path / "theirs.log")))
    try:
        deadline = time.monotonic() + 30
        while not socket_path.exists():  # the engine someone else runs is up
            assert time.monotonic() < deadline and theirs.poll() is None
            time.sleep(0.02)
        done = run(machine, "true")
        assert theirs.poll() is None  # still running: not ours to stop
    finally:
        theirs.terminate()
        theirs.wait(10)
    assert done.returncode == 0, done.stderr
    assert lines(machine["FAKE_DOCKERD_LOG"]) == []  # no dockerd of ours
    assert lines(tmp_path / "calls.log") == ["stripebench images bootstrap"]


def test_a_machine_where_dockerd_cannot_run_gets_one_line_and_a_non_zero_exit(machine, tmp_path):
    done = run(dict(machine, FAKE_DOCKERD="fail"), "sh", "-c", f"echo suite ran >> {tmp_path / 'calls.log'}")
    assert done.returncode == 4
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("docker: no Docker engine: dockerd exited: failed to start daemon") and "permission denied" in line
    assert "STRIPEBENCH_NO_DOCKER=1" in line
    assert lines(tmp_path / "calls.log") == []  # neither the image nor the suite: nothing is skipped silently
