"""`stripebench envs` lists the environments; `run` without --headless says how to proceed until the live TUI exists."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
import typer


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "stripebench_tui", *args], capture_output=True, text=True, timeout=60)


def test_envs_table_and_json() -> None:
    table = _cli("envs")
    assert table.returncode == 0
    rows = [line.split() for line in table.stdout.splitlines()]
    assert [r[:2] for r in rows] == [["broken-health", "backend"], ["tiny-shop", "backend"]]
    data = json.loads(_cli("envs", "--json").stdout)
    assert [(d["id"], d["category"]) for d in data] == [("broken-health", "backend"), ("tiny-shop", "backend")]
    assert data[1]["title"] == "Tiny shop: sign up a customer"


def test_run_flags_that_do_not_apply_are_one_line(tmp_path: Path) -> None:
    done = _cli("run", "tiny-shop", "--agent", "noop", "--plan", "x", "--headless")
    assert done.returncode == 2 and "--plan only applies to the oracle agent" in done.stderr


def test_run_without_headless_opens_the_live_tui_with_the_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from stripebench_tui.commands.run import run

    args = dict(env="tiny-shop", agent="oracle", plan=None, model=None, base_url=None, trace=None, seed=5,
                backend="emulator", stripe_key=None, episode_dir=tmp_path / "ep", max_turns=None, approve="never",
                paused=True, headless=False)
    opened = []

    def fake_run_live(config, *, present=False):
        opened.append((config, present))
        return 1  # the live app's exit code: the episode failed

    monkeypatch.setitem(sys.modules, "stripebench_tui.tui.apps.live_app", types.SimpleNamespace(run_live=fake_run_live))
    with pytest.raises(typer.Exit) as exited:
        run(**args)
    assert exited.value.exit_code == 1
    with pytest.raises(typer.Exit):
        run(**args, present=True)
    assert [(c.env, c.seed, c.start_paused, c.headless, present) for c, present in opened] == [
        ("tiny-shop", 5, True, False, False), ("tiny-shop", 5, True, False, True)]
    assert not (tmp_path / "ep").exists()


OVERLAY_WITH_SERVICES = """title = "An app on PostgreSQL and npm"
[postgres]
role = "model"
database = "saas_db"
[node]
"""


@pytest.mark.parametrize("pg_bin", ["", "/nowhere/bin"])
def test_envs_path_and_doctor_say_whether_postgres_and_node_are_here(tmp_path: Path, pg_bin: str) -> None:
    folder = tmp_path / "bench" / "pg-app"
    (folder / "environment").mkdir(parents=True)
    (folder / "grader").mkdir()
    (folder / "environment" / "PROBLEM.md").write_text("# Use the database\n")
    (folder.parent / "pg-app.stripebench.toml").write_text(OVERLAY_WITH_SERVICES)
    env = {**os.environ, **({"STRIPEBENCH_PG_BIN": pg_bin} if pg_bin else {})}
    listed = subprocess.run([sys.executable, "-m", "stripebench_tui", "envs", "--path", str(folder.parent)],
                            capture_output=True, text=True, timeout=60, env=env)
    assert listed.returncode == 0, listed.stderr
    lines = [line.strip() for line in listed.stdout.splitlines()]
    if pg_bin:
        assert "MISSING: PostgreSQL not found: apt-get install postgresql (Debian's package), or set STRIPEBENCH_PG_BIN " \
               "to a directory holding initdb and postgres" in lines, lines
    else:
        assert any(line.startswith("here: PostgreSQL ") and "(each episode makes its own cluster)" in line for line in lines)
    assert any(line.startswith("here: Node.js v") for line in lines), lines
    data = json.loads(subprocess.run([sys.executable, "-m", "stripebench_tui", "envs", "--path", str(folder.parent),
                                      "--json"], capture_output=True, text=True, timeout=60, env=env).stdout)
    assert [c["present"] for c in data[0]["here"]] == [not pg_bin, True]

    doctor = subprocess.run([sys.executable, "-m", "stripebench_tui", "doctor", "--no-docker"], capture_output=True,
                            text=True, timeout=120, env=env).stdout.splitlines()
    # the published SaaS-starter folders need both; missing, the line is optional ("-"), not a failure
    pg = next(line for line in doctor if "PostgreSQL" in line)
    assert pg.startswith("-" if pg_bin else "ok") and "[for saas-starter-embedded-checkout, saas-starter-partial-payments]" in pg
