"""Manifest schema: a valid environment loads; each kind of mistake is one line naming file and field."""

import textwrap
from pathlib import Path

import pytest

from stripebench_tui.envs.catalog import find_environment, list_environments, load_environment
from stripebench_tui.envs.plans import PlanError, expand, load_plan
from stripebench_tui.errors import BadFileError, UserError

GOOD = """
id = "tiny-env"
title = "A tiny environment"
category = "backend"
submission = "answer.txt"
[limits]
max_turns = 5
[[services]]
name = "app"
command = "python -m http.server ${APP_PORT}"
ports = ["APP_PORT"]
health = { http = "http://127.0.0.1:${APP_PORT}/", timeout = 5 }
[solution]
name = "oracle"
plan = "solution/plan.toml"
"""


def make_env(tmp_path: Path, manifest: str = GOOD, name: str = "tiny-env") -> Path:
    root = tmp_path / name
    (root / "workspace").mkdir(parents=True)
    (root / "solution").mkdir()
    (root / "PROBLEM.md").write_text("Do the thing.\n")
    (root / "solution" / "body.txt").write_text("hello ${WHO}\n")
    (root / "solution" / "plan.toml").write_text(textwrap.dedent("""
        [[step]]
        say = "Writing to ${APP_URL}"
        tool = "create_file"
        args = { path = "a.txt" }
        files = { content = "solution/body.txt" }
        [[step]]
        done = true
        say = "Done."
    """))
    (root / "environment.toml").write_text(manifest)
    return root


def test_a_valid_environment_loads_with_defaults(tmp_path):
    env = load_environment(make_env(tmp_path))
    m = env.manifest
    assert (m.id, m.category, m.limits.max_turns, m.limits.wall_time) == ("tiny-env", "backend", 5, 1800.0)
    assert m.services[0].health.http.endswith("${APP_PORT}/")
    assert m.grader_module == "tiny_env"
    assert m.docker.pids == 512  # a container holds at most this many processes
    assert env.problem_text() == "Do the thing.\n"
    assert [e.id for e in list_environments(tmp_path)] == ["tiny-env"]
    assert find_environment("tiny-env", tmp_path).root == env.root


@pytest.mark.parametrize("mutation, message", [
    (lambda s: s.replace('category = "backend"', 'category = "frontend"'), "category"),
    (lambda s: s + "\ncolour = 'red'\n", "colour: Extra inputs are not permitted"),
    (lambda s: s.replace("max_turns = 5", "max_turns = -1"), "limits.max_turns"),
    (lambda s: s.replace('health = { http = "http://127.0.0.1:${APP_PORT}/", timeout = 5 }', "health = { timeout = 5 }"),
     "exactly one of 'http' or 'tcp'"),
    (lambda s: s.replace('plan = "solution/plan.toml"', 'plan = "solution/missing.toml"'),
     "solution.plan: solution/missing.toml does not exist"),
    (lambda s: s.replace('id = "tiny-env"', 'id = "other-env"'), "does not match its directory name"),
    (lambda s: s.replace("[limits]", "[limits"), "not valid TOML"),
    (lambda s: s + "\n[docker]\npids = 4\n", "docker.pids: Input should be greater than or equal to 32"),
    (lambda s: s.replace('submission = "answer.txt"', 'requirements = "deps.txt"'), "requirements: deps.txt does not exist"),
])
def test_mistakes_are_one_line_naming_the_file_and_field(tmp_path, mutation, message):
    root = make_env(tmp_path, mutation(GOOD))
    with pytest.raises(BadFileError) as err:
        load_environment(root)
    text = str(err.value)
    assert "\n" not in text and str(root / "environment.toml") in text and message in text


def test_unknown_environment_lists_the_known_ones(tmp_path):
    make_env(tmp_path)
    with pytest.raises(UserError, match="unknown environment 'nope'; known: tiny-env"):
        find_environment("nope", tmp_path)


def test_plans_read_file_arguments_and_expand_context(tmp_path):
    root = make_env(tmp_path)
    steps = load_plan(root / "solution" / "plan.toml", root)
    assert steps[0].tool == "create_file" and steps[0].args["content"] == "hello ${WHO}\n"
    assert steps[1].done and steps[1].tool is None
    assert expand(steps[0].say, {"APP_URL": "http://x"}) == "Writing to http://x"
    assert expand({"a": ["$${KEEP}", "${WHO}"]}, {"WHO": "you"}) == {"a": ["${KEEP}", "you"]}
    with pytest.raises(PlanError, match=r"\$\{WHO\}"):
        expand(steps[0].args, {})


def test_a_step_without_tool_or_done_is_refused(tmp_path):
    root = make_env(tmp_path)
    (root / "solution" / "plan.toml").write_text('[[step]]\nsay = "hm"\n')
    with pytest.raises(PlanError, match="step 1: needs a 'tool' or 'done = true'"):
        load_plan(root / "solution" / "plan.toml", root)


def test_a_relative_environments_dir_gives_absolute_paths(tmp_path, monkeypatch):
    make_env(tmp_path)
    monkeypatch.chdir(tmp_path.parent)
    monkeypatch.setenv("STRIPEBENCH_ENVIRONMENTS", tmp_path.name)
    env = find_environment("tiny-env")
    assert env.root.is_absolute() and env.root == tmp_path / "tiny-env"


def test_requirements_default_to_the_workspaces_file_and_can_be_declared_or_refused(tmp_path, monkeypatch):
    from stripebench_tui.envs.deps import dependencies, requirements_file

    monkeypatch.setenv("STRIPEBENCH_CACHE", str(tmp_path / "cache"))
    root = make_env(tmp_path)
    assert requirements_file(load_environment(root)) is None and dependencies(load_environment(root)) is None
    (root / "workspace" / "requirements.txt").write_text("flask>=3\n")
    deps = dependencies(load_environment(root))
    assert deps.requirements == root / "workspace" / "requirements.txt"
    assert deps.home == tmp_path / "cache" / "envs" / "tiny-env" and not deps.ready()
    (root / "deps.txt").write_text("flask>=3\n")
    declared = load_environment(make_env(tmp_path / "b",
                                         GOOD.replace('submission = "answer.txt"', 'requirements = "../../tiny-env/deps.txt"')))
    assert requirements_file(declared) == declared.root / "../../tiny-env/deps.txt"
    assert dependencies(declared).key == deps.key  # same content, same interpreter: same key
    (root / "deps.txt").write_text("flask>=3.1\n")
    assert dependencies(declared).key != deps.key
    none = load_environment(make_env(tmp_path / "c", GOOD.replace('submission = "answer.txt"', 'requirements = ""')))
    (none.workspace / "requirements.txt").write_text("flask\n")
    assert requirements_file(none) is None


def test_without_a_checkout_around_the_package_the_bundled_copies_are_used(tmp_path, monkeypatch):
    import stripebench_tui.envs.manifest as manifest
    from stripebench_tui.grading.loader import graders_dir

    monkeypatch.delenv("STRIPEBENCH_ENVIRONMENTS", raising=False)
    monkeypatch.delenv("STRIPEBENCH_GRADERS", raising=False)
    checkout = Path(manifest.__file__).resolve().parents[2]
    assert manifest.environments_dir() == checkout / "environments" and graders_dir() == checkout / "graders"
    fake_package = tmp_path / "site-packages" / "stripebench_tui"
    (fake_package / "envs").mkdir(parents=True)
    monkeypatch.setattr(manifest, "__file__", str(fake_package / "envs" / "manifest.py"))
    assert manifest.bundled_dir("environments") == fake_package / "bundled" / "environments"
    assert manifest.environments_dir() == fake_package / "bundled" / "environments"
    monkeypatch.setenv("STRIPEBENCH_ENVIRONMENTS", str(tmp_path))
    assert manifest.environments_dir() == tmp_path  # the variable comes first
