"""The episode's own PostgreSQL cluster (runtime.postgres): a real server from Debian's package, and its refusals."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stripebench_tui.envs.manifest import PostgresSpec
from stripebench_tui.runtime import postgres
from stripebench_tui.runtime.services import free_port

PSQL = "/usr/bin/psql"


def _serve(data: Path, port: int, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "stripebench_tui.runtime.postgres", "serve", "--data", str(data),
                             "--port", str(port), "--role", "model", "--password", "password", "--database", "saas_db"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, **env})


def _wait_listening(proc: subprocess.Popen[str], port: int, timeout: float = 60) -> list[str]:
    """Lines the server printed until it said it listens (the event the test waits for)."""
    assert proc.stdout is not None
    seen = []
    deadline = time.monotonic() + timeout
    for line in proc.stdout:
        seen.append(line.rstrip())
        if "database system is ready to accept connections" in line:
            return seen
        assert time.monotonic() < deadline, seen
    raise AssertionError(f"exited with {proc.wait()}: {seen}")


def test_a_cluster_of_its_own_serves_the_role_and_database_and_is_removed_when_stopped(tmp_path: Path) -> None:
    assert postgres.find_binaries() is not None, "Debian's postgresql package is a test dependency (scripts/setup.sh)"
    port = free_port()
    data = tmp_path / "episode" / "postgres"
    proc = _serve(data, port)
    try:
        lines = _wait_listening(proc, port)
        assert any(f"listening on 127.0.0.1:{port}" in ln for ln in lines)
        assert not any("password@" in ln for ln in lines), "the URL is printed without its password"
        url = postgres.url_for(PostgresSpec(role="model", password="password", database="saas_db"), port)
        out = subprocess.run([PSQL, url, "-tAc", "select current_user || ' ' || current_database()"],
                             capture_output=True, text=True, timeout=30)
        assert out.stdout.strip() == "model saas_db", out.stderr
        subprocess.run([PSQL, url, "-c", "create table t (x int)"], check=True, capture_output=True, timeout=30)
        # an app holding a connection open does not keep the server from stopping
        holder = subprocess.Popen([PSQL, url, "-c", "select pg_sleep(60)"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
        holder.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    made_in = Path(next(ln for ln in lines if "making a cluster" in ln).rsplit(" in ", 1)[1])
    assert not made_in.exists(), f"the cluster ({made_in}) is removed when the episode ends"
    if made_in != data:  # pytest's tmp dir is root's own: the server's user cannot reach it, so a temporary one was used
        assert made_in.name == "data" and made_in.parent.name.startswith("stripebench-pg-")
        assert not made_in.parent.exists()
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0, "nothing listens any more"


def test_a_taken_port_is_one_line_with_the_fix(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = _serve(tmp_path / "pg", port)
        out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert out.strip().splitlines() == [f"postgres: port {port} is taken: stop what listens there, or let the episode pick another port"]
    assert not (tmp_path / "pg").exists(), "nothing half-made is left"


def test_postgresql_missing_is_one_line_naming_the_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    proc = _serve(tmp_path / "pg", free_port(), **{postgres.BIN_VAR: str(tmp_path / "no-such-bin")})
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert out.strip() == f"postgres: PostgreSQL not found: {postgres.INSTALL_FIX}"
    monkeypatch.setenv(postgres.BIN_VAR, str(tmp_path / "no-such-bin"))
    assert postgres.describe() == (False, f"PostgreSQL not found: {postgres.INSTALL_FIX}")  # doctor's line


def test_a_cluster_is_never_reused(tmp_path: Path) -> None:
    data = tmp_path / "pg"
    data.mkdir()
    (data / "PG_VERSION").write_text("15\n")
    proc = _serve(data, free_port())
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 2 and "is not empty: a cluster is never reused" in out
    assert (data / "PG_VERSION").read_text() == "15\n", "what was there is left untouched"


def test_names_that_are_not_identifiers_are_refused_before_anything_is_made(tmp_path: Path) -> None:
    with pytest.raises(postgres.ClusterProblem, match="not a plain identifier"):
        postgres.make_cluster(tmp_path / "pg", free_port(), "model; drop", "password", "saas_db")
    assert not (tmp_path / "pg").exists()


def test_the_service_an_environment_asks_for() -> None:
    spec = postgres.service_spec(PostgresSpec(role="model", password="pass word", database="saas_db"))
    assert spec.name == "postgres" and spec.ports == ["POSTGRES_PORT"]
    assert spec.health is not None and spec.health.tcp == "127.0.0.1:${POSTGRES_PORT}"
    assert "--password 'pass word'" in spec.command and spec.command.startswith(sys.executable)
