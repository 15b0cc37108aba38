"""The envs table's stack and size columns, and that `validate --all` sees every bundled environment."""

from __future__ import annotations

import json
from pathlib import Path

from stripebench_tui.envs.catalog import list_environments
from stripebench_tui.envs.manifest import bundled_dir
from stripebench_tui.envs.size import Size, workspace_size


def test_size_counts_the_agents_files_and_their_lines_not_what_running_made(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("a = 1\nb = 2\n")
    (tmp_path / "README.md").write_text("no newline at the end")
    (tmp_path / "static").mkdir()
    (tmp_path / "static" / "logo.png").write_bytes(b"\x89PNG\0\0\n\n")
    (tmp_path / "shop.db").write_bytes(b"SQLite format 3\0")
    (tmp_path / ".venv" / "lib").mkdir(parents=True)
    (tmp_path / ".venv" / "lib" / "x.py").write_text("x\n" * 100)
    assert workspace_size(tmp_path) == Size(files=3, lines=3)
    assert str(workspace_size(tmp_path)) == "3 files, 3 lines"
    assert workspace_size(tmp_path / "missing") == Size(0, 0)


def test_every_bundled_environment_has_a_category_stack_and_is_listed_for_validate_all() -> None:
    root = bundled_dir("environments")
    listed = {e.id: e for e in list_environments(root)}
    # published/ holds the overlays for Stripe's benchmark folders, which are run by path, not listed.
    dirs = {d.name for d in root.iterdir() if d.is_dir() and d.name != "published"}
    assert set(listed) == dirs
    for env in listed.values():
        assert env.manifest.stack, f"{env.id} names no stack"
        assert workspace_size(env.workspace).files > 0
    assert listed["checkout-gym"].manifest.category == "gym"


def _envs(*args: str) -> str:
    """`stripebench envs ARGS` in this process (the CLI's own subprocess test covers the entry point)."""
    import typer
    from typer.testing import CliRunner

    from stripebench_tui.commands import envs

    app = typer.Typer()
    envs.register(app)  # `envs` is a group (with `envs new`), so it is invoked by name
    done = CliRunner().invoke(app, ["envs", *args], env={"STRIPEBENCH_ENVIRONMENTS": str(bundled_dir("environments"))})
    assert done.exit_code == 0, done.output
    return done.output


def test_the_envs_command_prints_stack_and_size() -> None:
    table = _envs().splitlines()
    gym = next(line for line in table if line.startswith("checkout-gym "))
    size = workspace_size(bundled_dir("environments") / "checkout-gym" / "workspace")
    assert "gym" in gym and "Python · Flask · SQLite · Checkout" in gym and str(size) in gym
    rows = {row["id"]: row for row in json.loads(_envs("--json"))}
    assert (rows["checkout-gym"]["files"], rows["checkout-gym"]["lines"]) == (size.files, size.lines)
    assert rows["checkout-focus-recovery"]["category"] == "full-stack"
