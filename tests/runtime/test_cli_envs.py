"""`stripebench envs` lists the environments; `run` without --headless says how to proceed until the live TUI exists."""

from __future__ import annotations

import json
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
