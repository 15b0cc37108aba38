"""Finding and importing an environment's grader file."""

from __future__ import annotations

import pytest

from stripebench_tui.errors import BadFileError
from stripebench_tui.grading import Grader, load_grader

from .conftest import write_env

GOOD = """
from stripebench_tui.grading import Criterion, Grader, passed

GRADER = Grader((Criterion("ok", 1, "Always fine.", lambda ctx, view: passed()),), description="A toy.")
"""


def test_no_grader_file_means_none(env, tmp_path):
    assert load_grader(env, root=tmp_path / "graders") is None


def test_grader_from_GRADER_or_build_and_the_env_var(env, tmp_path, monkeypatch):
    graders = tmp_path / "graders"
    graders.mkdir()
    (graders / "tiny_shop.py").write_text(GOOD)
    monkeypatch.setenv("STRIPEBENCH_GRADERS", str(graders))
    grader = load_grader(env)
    assert isinstance(grader, Grader) and grader.description == "A toy."
    (graders / "tiny_shop.py").write_text(GOOD.replace("GRADER =", "def build():\n    return") )
    assert load_grader(env).criteria[0].name == "ok"


def test_the_manifest_can_name_another_module(tmp_path):
    env = write_env(tmp_path / "envs", extra='grader = "shared_shop"\n')
    (tmp_path / "graders").mkdir()
    (tmp_path / "graders" / "shared_shop.py").write_text(GOOD)
    assert load_grader(env, root=tmp_path / "graders") is not None


@pytest.mark.parametrize(
    "source, message",
    [
        ("import nonexistent_module_xyz\n",
         "the grader failed to load: ModuleNotFoundError: No module named 'nonexistent_module_xyz'"),
        ("def broken(:\n", "the grader failed to load: SyntaxError"),
        ("X = 1\n", "defines neither GRADER nor build()"),
        ("GRADER = [1, 2]\n", "GRADER is a list, not a stripebench_tui.grading.Grader"),
        (GOOD.replace('"ok", 1,', '"ok", 0,'), "weight must be a positive number"),
    ],
)
def test_a_broken_grader_file_is_a_one_line_bad_file_error(env, tmp_path, source, message):
    graders = tmp_path / "graders"
    graders.mkdir()
    (graders / "tiny_shop.py").write_text(source)
    with pytest.raises(BadFileError) as info:
        load_grader(env, root=graders)
    text = str(info.value)
    assert text.startswith(str(graders / "tiny_shop.py")) and message in text and "\n" not in text
