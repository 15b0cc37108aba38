"""AppCopy: a second copy of the environment's app on its own port, database and Stripe base."""

from __future__ import annotations

import os
import sqlite3
import time

import pytest

from stripebench_tui.grading import GradingContext, GradingUnavailable
from stripebench_tui.grading.app_copy import AppCopy, AppDown, free_port
from tests.grading.conftest import write_env

SERVICE = '\n[[services]]\nname = "app"\ncommand = "python3 app.py"\nports = ["APP_PORT"]\n'
APP = """\
import json, os, sqlite3
from http.server import BaseHTTPRequestHandler, HTTPServer

class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_GET(self):
        if self.path == "/health":
            body = b"ok"
        else:
            rows = []
            if os.path.exists(os.environ["DATABASE_PATH"]):
                rows = [r[0] for r in sqlite3.connect(os.environ["DATABASE_PATH"]).execute("SELECT name FROM t")]
            names = ("APP_PORT", "APP_URL", "DATABASE_PATH", "STRIPE_API_BASE", "FROM_EPISODE", "GRADER_ONLY",
                     "DROPPED")
            body = json.dumps({"env": {k: os.environ.get(k) for k in names}, "rows": rows}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

HTTPServer(("127.0.0.1", int(os.environ["APP_PORT"])), H).serve_forever()
"""


def _ctx(tmp_path, app: str = APP, service: str = SERVICE) -> GradingContext:
    env = write_env(tmp_path / "envs", extra=service)
    workspace = tmp_path / "episode" / "workspace"
    workspace.mkdir(parents=True)
    (workspace / "app.py").write_text(app)
    return GradingContext(env=env, episode_dir=tmp_path / "episode", workspace=workspace,
                          stripe_api_base="http://127.0.0.1:9", stripe_api_key="sk_test_x",
                          env_vars={"FROM_EPISODE": "yes", "STRIPE_API_BASE": "http://episode-stripe"})


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for its new parent to reap it counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_copy_gets_its_own_port_fresh_database_stripe_base_and_overrides(tmp_path, monkeypatch):
    monkeypatch.setenv("DROPPED", "grader's own")
    ctx = _ctx(tmp_path)
    with AppCopy(ctx, stripe_api_base="http://proxy", unset=("DROPPED",), env={"GRADER_ONLY": "1"}) as app:
        got = app.http.get("/env").json()
        tmp = app.db_path.parent
    env = got["env"]
    assert env["APP_URL"] == app.url and app.url.endswith(":" + env["APP_PORT"])
    assert env["DATABASE_PATH"] == str(app.db_path) and app.db_path.name == "grading.db"
    assert not str(app.db_path).startswith(str(ctx.workspace))  # never the episode app's database
    assert (env["STRIPE_API_BASE"], env["FROM_EPISODE"], env["GRADER_ONLY"], env["DROPPED"]) == (
        "http://proxy", "yes", "1", None)
    assert app.proc.poll() is not None and not tmp.exists()  # stopped, reaped, files gone
    assert (ctx.episode_dir / "logs" / "grader-app.log").is_file()


def test_without_a_stripe_base_the_episodes_is_kept_and_the_database_is_a_copy(tmp_path):
    ctx = _ctx(tmp_path)
    with sqlite3.connect(ctx.workspace / "shop.db") as conn:
        conn.execute("CREATE TABLE t (name TEXT)")
        conn.execute("INSERT INTO t VALUES ('lamp')")
    with AppCopy(ctx, database="shop.db") as app:
        got = app.http.get("/env").json()
        assert app.row_counts() == {"t": 1}
        with sqlite3.connect(app.db_path) as conn:
            conn.execute("INSERT INTO t VALUES ('copy only')")
            conn.execute('CREATE TABLE "odd ""name""" (x)')
        assert app.row_counts() == {"odd \"name\"": 0, "t": 2}  # every table, read-only, quoted names too
    assert got["rows"] == ["lamp"] and got["env"]["STRIPE_API_BASE"] == "http://episode-stripe"
    with sqlite3.connect(ctx.workspace / "shop.db") as conn:
        assert [r[0] for r in conn.execute("SELECT name FROM t")] == ["lamp"]  # the original is untouched


def test_close_stops_the_whole_process_group(tmp_path):
    # The service command starts a child that would outlive a plain kill of bash.
    app_text = "import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n" + APP
    ctx = _ctx(tmp_path, app=app_text)
    app = AppCopy(ctx)
    children = os.popen(f"pgrep -g {app.proc.pid}").read().split()
    assert len(children) >= 2
    app.close()
    deadline = time.monotonic() + 5
    while any(_alive(int(pid)) for pid in children) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(int(pid)) for pid in children)


def test_an_app_that_exits_is_app_down_with_its_log(tmp_path):
    ctx = _ctx(tmp_path, app="raise SystemExit('broken app')\n")
    with pytest.raises(AppDown, match="copy of the shop did not become healthy"):
        AppCopy(ctx, noun="shop", start_timeout=10)
    assert "broken app" in (ctx.episode_dir / "logs" / "grader-app.log").read_text()


def test_no_service_or_no_database_is_grading_unavailable(tmp_path):
    with pytest.raises(GradingUnavailable, match="no 'app' service"):
        AppCopy(_ctx(tmp_path / "a", service=""))
    with pytest.raises(GradingUnavailable, match="no database at"):
        AppCopy(_ctx(tmp_path / "b"), database="missing.db")


def test_free_port_can_be_bound():
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", free_port()))


def test_a_port_taken_before_the_app_binds_it_gets_a_fresh_one(tmp_path, monkeypatch):
    import socket

    from stripebench_tui.grading import app_copy

    taken = socket.socket()  # bound by "another process" between free_port() and the app's bind
    taken.bind(("127.0.0.1", 0))
    ports = iter([taken.getsockname()[1]])
    monkeypatch.setattr(app_copy, "free_port", lambda: next(ports, None) or free_port())
    try:
        with AppCopy(_ctx(tmp_path)) as copy:
            assert copy.url != f"http://127.0.0.1:{taken.getsockname()[1]}"
            assert copy.http.get("/health").status_code == 200
            log = copy.log_path.read_text()
    finally:
        taken.close()
    assert "Address already in use" in log  # the first start, on the taken port


def test_an_app_that_exits_for_another_reason_is_not_started_again(tmp_path):
    ctx = _ctx(tmp_path, app="import sys; print('boom'); sys.exit(1)\n")
    with pytest.raises(AppDown):
        AppCopy(ctx, start_timeout=30)
    assert (tmp_path / "episode" / "logs" / "grader-app.log").read_text().count("boom") == 1


def test_the_copy_starts_where_the_contexts_process_host_says(tmp_path):
    # An episode hands its sandbox over as ctx.processes: the copy is started and kept there, never beside it.
    from stripebench_tui.grading.context import ThisMachine

    class Recording(ThisMachine):
        def __init__(self, env_vars):
            super().__init__(env_vars)
            self.started, self.scratches = [], []

        def start_process(self, command, *, cwd, env, unset=(), log):
            self.started.append((command, cwd, dict(env), unset))
            return super().start_process(command, cwd=cwd, env=env, unset=unset, log=log)

        def scratch_dir(self, prefix):
            self.scratches.append(tmp_path / "sandbox-scratch" / prefix)
            self.scratches[-1].mkdir(parents=True)
            return self.scratches[-1]

    ctx = _ctx(tmp_path)
    host = Recording(ctx.env_vars)
    ctx.processes = host
    with AppCopy(ctx, stripe_api_base="http://proxy", unset=("FROM_EPISODE", "APP_PORT")) as app:
        got = app.http.get("/env").json()["env"]
    [(command, cwd, env, unset)] = host.started
    assert command == "python3 app.py" and cwd == ctx.workspace
    assert env["APP_URL"] == app.url and env["STRIPE_API_BASE"] == "http://proxy"
    assert unset == ("FROM_EPISODE",)  # what the copy itself sets is never unset
    assert app.db_path.parent == host.scratches[0] and not host.scratches[0].exists()  # its scratch, then removed
    assert got["FROM_EPISODE"] is None and got["DATABASE_PATH"] == str(app.db_path)
