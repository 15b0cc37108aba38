"""An environment's ``[postgres]`` and ``[node]``: what the local sandbox makes before the agent starts, in order,
and how each refuses (one line with the fix, the log's tail) when this machine cannot make it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from stripebench_tui.core.bus import EventBus
from stripebench_tui.core.events import Service
from stripebench_tui.envs.catalog import load_environment
from stripebench_tui.runtime import postgres
from stripebench_tui.runtime.local import LocalSandbox
from stripebench_tui.runtime.services import ServiceFailed

MANIFEST = """id = "pg-app"
title = "An app on PostgreSQL with npm packages"
category = "backend"
tools = ["shell"]

[postgres]
role = "model"
password = "password"
database = "saas_db"

[node]

[[services]]
name = "app"
# the app needs its database up and its packages in place, as a Next.js app's migrations would
command = 'psql "$POSTGRES_URL" -qc "create table started (x int)" && command -v pnpm > pnpm-path.txt && test -f node_modules/left-pad/index.js && exec python3 -m http.server "$APP_PORT"'
ports = ["APP_PORT"]
health = { http = "http://127.0.0.1:${APP_PORT}/", timeout = 30 }
"""  # noqa: E501 - a TOML string holds the service's command on one line


def _env(tmp_path: Path, package_json: str | None = None):
    root = tmp_path / "envs" / "pg-app"
    (root / "workspace").mkdir(parents=True)
    (root / "environment.toml").write_text(MANIFEST)
    (root / "PROBLEM.md").write_text("# Use the database\n")
    (root / "workspace" / "package.json").write_text(package_json or json.dumps(
        {"name": "pg-app-test", "version": "1.0.0", "private": True, "dependencies": {"left-pad": "1.3.0"}}))
    return load_environment(root)


async def _bring_up(sandbox: LocalSandbox, seen: list) -> None:
    bus = EventBus()
    bus.subscribe(seen.append)
    try:
        await sandbox.install_dependencies(bus)
        await sandbox.run_setup(bus)
        await sandbox.start_services(bus)
        await bus.drain(5)
    finally:
        await bus.close()


async def test_packages_then_the_cluster_then_the_app(tmp_path: Path) -> None:
    env = _env(tmp_path)
    sandbox = LocalSandbox(env, tmp_path / "episode", {})
    sandbox.prepare()
    variables = sandbox.variables()
    assert variables["POSTGRES_URL"] == f"postgresql://model:password@127.0.0.1:{variables['POSTGRES_PORT']}/saas_db"
    seen: list = []
    try:
        await _bring_up(sandbox, seen)
        rows = subprocess.run(["psql", variables["POSTGRES_URL"], "-tAc", "select count(*) from started"],
                              capture_output=True, text=True, timeout=30)
        assert rows.stdout.strip() == "0", rows.stderr
        pnpm = (sandbox.workspace / "pnpm-path.txt").read_text().strip()
        assert pnpm.endswith("/node/bin/pnpm"), "the app's processes find the cached pnpm first on PATH"
        assert "npm_config_store_dir" in sandbox.tool_env()
    finally:
        await sandbox.stop()
    order = [(e.service, e.status) for e in seen if isinstance(e, Service) and e.status in ("starting", "healthy")]
    assert order == [("packages", "starting"), ("packages", "healthy"), ("postgres", "starting"),
                     ("postgres", "healthy"), ("app", "starting"), ("app", "healthy")]
    assert any(isinstance(e, Service) and e.service == "packages" and e.status == "log" and "left-pad" in e.text
               for e in seen), "the install's progress is on the bus"
    assert (sandbox.logs / "packages.log").is_file() and (sandbox.logs / "postgres.log").is_file()
    assert not (sandbox.episode_dir / "postgres").exists() or not any((sandbox.episode_dir / "postgres").iterdir())


async def test_postgresql_missing_ends_setup_with_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(postgres.BIN_VAR, str(tmp_path / "nowhere"))
    env = _env(tmp_path)
    sandbox = LocalSandbox(env, tmp_path / "episode", {})
    sandbox.prepare()
    try:
        with pytest.raises(ServiceFailed) as failed:
            await _bring_up(sandbox, [])
    finally:
        await sandbox.stop()
    assert str(failed.value).startswith("service postgres exited with code 2 before it was healthy")
    assert f"postgres: PostgreSQL not found: {postgres.INSTALL_FIX}" in str(failed.value)


async def test_a_broken_package_json_ends_setup_before_any_service(tmp_path: Path) -> None:
    env = _env(tmp_path, package_json='{"dependencies": ')
    sandbox = LocalSandbox(env, tmp_path / "episode", {})
    sandbox.prepare()
    seen: list = []
    try:
        with pytest.raises(ServiceFailed, match=r"^npm packages: .*package.json is not valid JSON .*: correct it"):
            await _bring_up(sandbox, seen)
    finally:
        await sandbox.stop()
    assert not any(isinstance(e, Service) and e.service == "postgres" for e in seen)
