"""A two-node Ray cluster on loopback for the tests and the benchmark: `ray start --head` plus a second node.

Every process it starts carries its own temporary directory in its command line; ``stop`` ends exactly
those, by pid (another engineer's Ray on the same machine is left alone).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ray_command() -> str:
    """Ray's console script beside this interpreter: never looked up on PATH, where a version manager (pyenv) has
    no shim for a freshly pip-installed command until it rehashes."""
    for folder in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        candidate = os.path.join(folder, "ray")
        if os.access(candidate, os.X_OK):
            return candidate
    raise RuntimeError(f"Ray's `ray` command is not installed beside {sys.executable}: pip install -e '.[ray]'")


def _ray(args: list[str], env: dict[str, str]) -> None:
    done = subprocess.run([ray_command(), "start", *args, "--disable-usage-stats"], env=env, text=True,
                          capture_output=True, timeout=180)
    if done.returncode != 0:
        raise RuntimeError(f"ray start {' '.join(args)} failed: {done.stderr[-2000:]}")


def _own_ports() -> list[str]:
    # Every fixed default port moved to a free one, so two clusters on one machine do not meet.
    return ["--dashboard-agent-listen-port", str(free_port()), "--dashboard-agent-grpc-port", str(free_port()),
            "--metrics-export-port", str(free_port()), "--runtime-env-agent-port", str(free_port())]


class LocalCluster:
    """Head and one more node, one CPU each, both on 127.0.0.1."""

    def __init__(self, env: dict[str, str], cpus: int = 1) -> None:
        self.temp = Path(tempfile.mkdtemp(prefix="sbray-", dir="/tmp"))  # short: Ray's socket paths must fit
        self.env = {**env, "RAY_AUTH_MODE": "disabled"}  # no token from ~/.ray: the nodes and the driver agree
        self.port = free_port()
        self.worker_manager_port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.cpus = cpus

    def start(self) -> LocalCluster:
        started = time.monotonic()
        _ray(["--head", "--node-ip-address", "127.0.0.1", "--port", str(self.port), "--num-cpus", str(self.cpus),
              "--include-dashboard", "false", "--temp-dir", str(self.temp), *_own_ports()], self.env)
        _ray(["--address", self.address, "--node-ip-address", "127.0.0.1", "--num-cpus", str(self.cpus),
              "--node-manager-port", str(self.worker_manager_port), *_own_ports()], self.env)
        self.startup_seconds = time.monotonic() - started
        return self

    def pids(self) -> list[int]:
        """Our cluster's processes: those whose command line names its temporary directory or its ports."""
        marks = (str(self.temp), f"node_manager_port={self.worker_manager_port}", self.address)
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if any(m in cmdline for m in marks):
                found.append(int(entry.name))
        return found

    def worker_raylet(self) -> int:
        """The pid of the second node's raylet."""
        for pid in self.pids():
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if "raylet/raylet" in cmdline and f"node_manager_port={self.worker_manager_port}" in cmdline:
                return pid
        raise LookupError("the worker node's raylet is not running")

    def stop(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in self.pids():
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
            if sig == signal.SIGTERM:
                deadline = time.monotonic() + 5
                while self.pids() and time.monotonic() < deadline:
                    time.sleep(0.1)  # waiting for processes to exit (no event to wait on for a non-child)
        shutil.rmtree(self.temp, ignore_errors=True)


def descendants_of(ancestor: int, needle: str) -> list[int]:
    """Processes under ``ancestor`` whose command line contains ``needle``."""
    parents: dict[int, int] = {}
    cmdlines: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            cmdlines[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        ppid = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("PPid:")), 0)
        parents[int(entry.name)] = ppid
    out = []
    for pid, cmd in cmdlines.items():
        if needle not in cmd:
            continue
        p = parents.get(pid, 0)
        while p > 1:
            if p == ancestor:
                out.append(pid)
                break
            p = parents.get(p, 0)
    return out
