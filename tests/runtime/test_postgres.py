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
                             "--port", str(port), "--role", "model", "--password-env", postgres.PASSWORD_VAR,
                             "--database", "saas_db"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, postgres.PASSWORD_VAR: "password", **env})


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
    assert out.strip().splitlines() == [f"postgres: port {port} is taken: stop what listens there, or let the episode pick "
                                        f"another port"]
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
    assert spec.command.startswith(sys.executable)
    assert "pass word" not in spec.command, "no password on a command line (ps shows those)"
    assert f"--password-env {postgres.PASSWORD_VAR}" in spec.command


def _psql(url: str, sql: str = "select 1", **env: str) -> subprocess.CompletedProcess[str]:
    """psql as the test's own user, with nothing that would supply a password behind its back."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    return subprocess.run([PSQL, url, "-w", "-tAc", sql], capture_output=True, text=True, timeout=30,
                          env={**clean, "PGPASSFILE": os.devnull, **env})


def test_nobody_gets_in_without_the_password(tmp_path: Path) -> None:
    """Password authentication on TCP: the app's role with its password only; a wrong password, the superuser
    without its password and the superuser's programs (COPY ... TO PROGRAM) are out of reach; no password is on
    any command line; the superuser's own password is random and kept in a 0600 file in the 0700 data directory."""
    port = free_port()
    proc = _serve(tmp_path / "episode" / "postgres", port)
    try:
        lines = _wait_listening(proc, port)
        good = postgres.url_for(PostgresSpec(role="model", password="password", database="saas_db"), port)
        assert _psql(good, "select current_user").stdout.strip() == "model"
        wrong = _psql(f"postgresql://model:not-the-password@127.0.0.1:{port}/saas_db")
        assert wrong.returncode != 0 and "password authentication failed" in wrong.stderr
        for superuser in (f"postgresql://postgres@127.0.0.1:{port}/postgres",
                          f"postgresql://postgres:password@127.0.0.1:{port}/postgres",
                          f"postgresql://postgres:@127.0.0.1:{port}/postgres"):
            refused = _psql(superuser, "copy (select 1) to program 'true'")
            assert refused.returncode != 0, superuser
            assert "password" in refused.stderr, refused.stderr  # refused for want of the password, not by chance
        # the app's role is no superuser: it cannot run programs either
        assert "must be superuser" in _psql(good, "copy (select 1) to program 'true'").stderr
        # nothing the cluster runs has a password on its command line
        seen_server = False
        for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
            try:
                argv = cmdline.read_bytes().split(b"\0")
            except OSError:
                continue
            if any(b"stripebench_tui.runtime.postgres" in a for a in argv) or (argv and argv[0].endswith(b"/postgres")):
                seen_server = seen_server or argv[0].endswith(b"/postgres")
                assert b"password" not in b" ".join(argv[1:]).replace(b"password-env", b""), argv
        assert seen_server, "the scan saw the server's own command line"
        made_in = Path(next(ln for ln in lines if "making a cluster" in ln).rsplit(" in ", 1)[1])
        secret = made_in / postgres.SUPERUSER_PASSWORD_FILE
        assert secret.stat().st_mode & 0o777 == 0o600 and made_in.stat().st_mode & 0o777 == 0o700
        superuser_password = secret.read_text().strip()
        assert len(superuser_password) >= 32
        ok = _psql(f"postgresql://postgres@127.0.0.1:{port}/postgres", "select current_user",
                   PGPASSWORD=superuser_password)
        assert ok.stdout.strip() == "postgres", ok.stderr  # the operator, with the file, still can
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)


def test_the_role_password_must_be_given(tmp_path: Path) -> None:
    proc = _serve(tmp_path / "pg", free_port(), **{postgres.PASSWORD_VAR: ""})
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert out.strip() == f"postgres: ${postgres.PASSWORD_VAR} is empty: it must hold the role's password"
    assert not (tmp_path / "pg").exists()
