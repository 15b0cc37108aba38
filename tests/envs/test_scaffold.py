"""`stripebench envs new`: the skeleton's layout, a copy with --from, the refusals; and the shared workspace files.

Fast: nothing here runs an episode (tests/envs/test_scaffold_validate.py validates a generated environment).
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from stripebench_tui.envs.catalog import find_environment
from stripebench_tui.envs.manifest import SHARED_DIR, load_manifest_environment
from stripebench_tui.envs.plans import load_plan
from stripebench_tui.envs.scaffold import Targets, new_environment
from stripebench_tui.envs.workspace import copy_workspace
from stripebench_tui.errors import BadFileError, UserError
from stripebench_tui.grading import Grader, load_grader
from stripebench_tui.grading.loader import grader_path


def _targets(tmp_path: Path) -> Targets:
    return Targets(tmp_path / "environments", tmp_path / "graders")


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "stripebench_tui", "envs", "new", *args, "--dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)


def test_the_skeleton_is_a_complete_environment_with_a_grader_and_the_shared_dev_server(tmp_path: Path) -> None:
    made = new_environment("demo-task", _targets(tmp_path))
    env = load_manifest_environment(tmp_path / "environments" / "demo-task")
    assert env.id == "demo-task" and env.manifest.shared == ["devserver.py"]
    assert not (env.workspace / "devserver.py").exists()  # shared, not a copy
    assert env.manifest.stripe.seed == "seed.py" and env.manifest.solution is not None
    assert [m.name for m in env.manifest.mutants] == ["no-member-number"]
    assert made.grader == tmp_path / "graders" / "demo_task.py"
    grader = load_grader(env, tmp_path / "graders")
    assert isinstance(grader, Grader) and len(grader.criteria) == 3
    # every plan loads and every edit it makes applies to the file it edits
    for ref in [env.manifest.solution, *env.manifest.mutants]:
        files = {"app.py": (env.workspace / "app.py").read_text()}
        for step in load_plan(env.path(ref.plan), env.root):
            if step.tool == "create_file":
                files[step.args["path"]] = step.args["content"]
            elif step.tool == "replace_in_file":
                assert files[step.args["path"]].count(step.args["old_text"]) == 1, (ref.name, step.say)
        assert "customers.create" in files["app.py"]
    assert not any("__ENV_ID__" in p.read_text() for p in [*made.files, made.grader])
    assert "demo-task" in made.grader.read_text()
    assert made.next_command() == (f"STRIPEBENCH_ENVIRONMENTS={tmp_path / 'environments'} "
                                   f"STRIPEBENCH_GRADERS={tmp_path / 'graders'} stripebench validate demo-task")


def test_from_copies_an_environment_and_its_grader_under_the_new_id(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    source = find_environment("checkout-migration")
    made = new_environment("my-checkout", _targets(tmp_path), source, grader_path(source))
    manifest = tomllib.loads((made.env_dir / "environment.toml").read_text())
    assert manifest["id"] == "my-checkout" and manifest["grader"] == "my_checkout"
    env = load_manifest_environment(made.env_dir)
    assert sorted(p.name for p in env.workspace.iterdir()) == sorted(p.name for p in source.workspace.iterdir())
    assert made.grader is not None
    original = grader_path(source).read_text()
    # the grader finds its seed module by the environment's id: the copy's names the copy
    assert 'environments_dir() / "checkout-migration" / "seed.py"' in original
    assert made.grader.read_text() == original.replace("checkout-migration", "my-checkout")
    monkeypatch.setenv("STRIPEBENCH_ENVIRONMENTS", str(tmp_path / "environments"))
    assert load_grader(env, tmp_path / "graders") is not None
    (env.root / "seed.py").rename(env.root / "seed.moved")  # without the copy's seed, the copy's grader cannot load
    with pytest.raises(BadFileError, match="the grader failed to load"):
        load_grader(env, tmp_path / "graders")


@pytest.mark.parametrize("name", ["Demo", "1st", "d", "demo_task", "-demo", "demo/x"])
def test_an_invalid_name_is_refused_and_nothing_is_written(tmp_path: Path, name: str) -> None:
    with pytest.raises(UserError, match="not a valid environment id"):
        new_environment(name, _targets(tmp_path))
    assert not (tmp_path / "environments").exists() and not (tmp_path / "graders").exists()


def test_an_existing_name_is_refused_and_nothing_is_overwritten(tmp_path: Path) -> None:
    new_environment("demo-task", _targets(tmp_path))
    app = tmp_path / "environments" / "demo-task" / "workspace" / "app.py"
    app.write_text("mine\n")
    with pytest.raises(UserError, match="already exists"):
        new_environment("demo-task", _targets(tmp_path))
    assert app.read_text() == "mine\n"
    # a grader module of that name alone is enough to refuse (it would be overwritten)
    (tmp_path / "graders" / "other_task.py").write_text("GRADER = None\n")
    with pytest.raises(UserError, match="other_task.py already exists"):
        new_environment("other-task", _targets(tmp_path))
    assert not (tmp_path / "environments" / "other-task").exists()
    assert (tmp_path / "graders" / "other_task.py").read_text() == "GRADER = None\n"


def test_the_command_prints_what_it_made_and_the_next_command_and_refuses_in_one_line(tmp_path: Path) -> None:
    made = _cli(tmp_path, "demo-task")
    assert made.returncode == 0, made.stderr
    lines = made.stdout.splitlines()
    assert lines[0] == "made demo-task:"
    assert f"  {tmp_path / 'graders' / 'demo_task.py'}" in lines
    assert f"  {tmp_path / 'environments' / 'demo-task' / 'solution' / 'plan.toml'}" in lines
    assert lines[-1].startswith("next: STRIPEBENCH_ENVIRONMENTS=") and lines[-1].endswith("stripebench validate demo-task")
    again = _cli(tmp_path, "demo-task")
    assert again.returncode == 2 and again.stdout == ""
    assert len(again.stderr.strip().splitlines()) == 1 and "already exists" in again.stderr
    bad = _cli(tmp_path, "Demo")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "not a valid" in bad.stderr


def test_shared_files_are_copied_into_the_episode_workspace_beside_the_environments_own(tmp_path: Path) -> None:
    env = find_environment("checkout-migration")
    assert "devserver.py" in env.manifest.shared and not (env.workspace / "devserver.py").exists()
    copy_workspace(env, tmp_path / "ws")
    assert (tmp_path / "ws" / "devserver.py").read_bytes() == (SHARED_DIR / "devserver.py").read_bytes()
    assert (tmp_path / "ws" / "app.py").read_bytes() == (env.workspace / "app.py").read_bytes()


def test_a_shared_file_that_does_not_exist_or_is_also_in_the_workspace_is_a_one_line_manifest_error(
        tmp_path: Path) -> None:
    new_environment("demo-task", _targets(tmp_path))
    root = tmp_path / "environments" / "demo-task"
    manifest = root / "environment.toml"
    text = manifest.read_text()
    manifest.write_text(text.replace('shared = ["devserver.py"]', 'shared = ["devserve.py"]'))
    with pytest.raises(BadFileError, match=r"shared: no shared file 'devserve.py' \(there are: devserver.py\)"):
        load_manifest_environment(root)
    manifest.write_text(text)
    (root / "workspace" / "devserver.py").write_text("# a copy of its own\n")
    with pytest.raises(BadFileError, match="devserver.py is also in workspace/"):
        load_manifest_environment(root)


def test_no_bundled_environment_carries_its_own_dev_server() -> None:
    root = Path(__file__).resolve().parents[2] / "environments"
    copies = sorted(str(p.relative_to(root)) for p in root.glob("*/workspace/devserver.py"))
    assert copies == []
