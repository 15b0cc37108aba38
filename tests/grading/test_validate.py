"""`stripebench validate`: the verdict logic and table with a fake runner, exit codes through the CLI."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from rich.console import Console
from typer.testing import CliRunner

from stripebench_tui.commands import validate as validate_command
from stripebench_tui.errors import EXIT_EPISODE_FAILED, EXIT_OK, UserError
from stripebench_tui.grading.validation import MUTANT, NOOP, ORACLE, Run, RunOutcome, all_ok, validate, validation_table
from stripebench_tui.runtime import validate as runtime_validate

from .conftest import write_env

GRADER = '''
from stripebench_tui.grading import Criterion, Grader, passed
GRADER = Grader((Criterion("a", 1, "A.", lambda c, v: passed()), Criterion("b", 1, "B.", lambda c, v: passed())))
'''

PLANS = """
[solution]
name = "solution"
plan = "plans/solution.toml"

[[mutants]]
name = "ignores-400"
plan = "plans/ignores-400.toml"

[[mutants]]
name = "wrong-price"
plan = "plans/wrong-price.toml"
"""


@pytest.fixture
def shop(tmp_path, monkeypatch):
    envs, graders = tmp_path / "envs", tmp_path / "graders"
    (envs / "tiny-shop" / "plans").mkdir(parents=True)
    for name in ("solution", "ignores-400", "wrong-price"):
        (envs / "tiny-shop" / "plans" / f"{name}.toml").write_text('[[step]]\ndone = true\n')
    env = write_env(envs, extra=PLANS)
    graders.mkdir()
    (graders / "tiny_shop.py").write_text(GRADER)
    monkeypatch.setenv("STRIPEBENCH_ENVIRONMENTS", str(envs))
    monkeypatch.setenv("STRIPEBENCH_GRADERS", str(graders))
    return env


def fake_runner(scores):
    """A runner answering from ``scores`` by run label (a value that is an exception is raised)."""
    played = []

    async def run(env, run: Run) -> RunOutcome:
        played.append(run.label)
        got = scores[run.label]
        if isinstance(got, BaseException):
            raise got
        statuses = {"a": "pass" if got > 0 else "fail", "b": "pass" if got == 1.0 else "fail"}
        return RunOutcome(score=got, statuses=statuses, duration=0.25)

    run.played = played
    return run


GOOD = {"oracle": 1.0, "no-op": 0.0, "mutant ignores-400": 0.5, "mutant wrong-price": 0.5}


def render(rows) -> str:
    buf = io.StringIO()
    Console(file=buf, width=150, markup=False).print(validation_table(rows))
    return buf.getvalue()


async def test_every_run_is_played_in_order_and_judged(shop):
    runner = fake_runner(GOOD)
    lines = []
    rows = await validate([shop], runner, progress=lines.append)
    assert runner.played == ["oracle", "no-op", "mutant ignores-400", "mutant wrong-price"]
    assert [r.run.kind for r in rows] == [ORACLE, NOOP, MUTANT, MUTANT] and all_ok(rows)
    assert lines[0] == "[1/4] tiny-shop: oracle …" and lines[1] == "[1/4] tiny-shop: oracle → 1.00 in 0.2s ok"
    table = render(rows)
    assert "mutant wrong-price" in table and "✓✓" in table and "✓✗" in table and "✗✗" in table and "0.2s" in table


@pytest.mark.parametrize(
    "change, wrong",
    [
        ({"oracle": 0.5}, "oracle"),
        ({"no-op": 0.5}, "no-op"),
        ({"mutant wrong-price": 1.0}, "mutant wrong-price"),
        ({"mutant ignores-400": RuntimeError("seed script failed")}, "mutant ignores-400"),
    ],
)
async def test_any_run_off_its_expectation_fails_validation(shop, change, wrong):
    rows = await validate([shop], fake_runner(GOOD | change))
    assert not all_ok(rows)
    assert [r.run.label for r in rows if not r.ok] == [wrong]
    if isinstance(change.get(wrong), BaseException):
        assert "RuntimeError: seed script failed" in render(rows)


async def test_an_environment_without_a_grader_fails_without_running(shop, tmp_path, monkeypatch):
    monkeypatch.setenv("STRIPEBENCH_GRADERS", str(tmp_path / "nowhere"))
    runner = fake_runner(GOOD)
    rows = await validate([shop], runner)
    assert runner.played == [] and not all_ok(rows)
    assert all("no grader" in r.outcome.error for r in rows)


async def test_no_runs_is_not_valid():
    assert not all_ok(await validate([], fake_runner(GOOD)))


def cli(monkeypatch, scores, *args):
    runner = fake_runner(scores)
    monkeypatch.setattr(runtime_validate, "episode_runner", lambda env, run, keep=None: runner(env, run))
    app = typer.Typer()
    app.callback()(lambda: None)
    validate_command.register(app)
    return CliRunner().invoke(app, ["validate", *args])


def test_cli_exits_0_only_when_every_run_scores_as_expected(shop, monkeypatch):
    r = cli(monkeypatch, GOOD, "tiny-shop")
    assert r.exit_code == EXIT_OK, r.output
    assert "valid: every run scored as expected" in r.stdout and "tiny-shop criteria: 1 a, 2 b" in r.stdout
    assert "[4/4] tiny-shop: mutant wrong-price" in r.stderr  # progress goes to stderr

    assert "note:" not in r.stdout

    r = cli(monkeypatch, GOOD | {"mutant ignores-400": 0.0}, "tiny-shop")
    assert r.exit_code == EXIT_OK  # still valid, but the mutant that lost everything is pointed out
    assert "note: tiny-shop mutant ignores-400 scores 0 like the no-op agent" in r.stdout

    r = cli(monkeypatch, GOOD | {"no-op": 0.5}, "--all")
    assert r.exit_code == EXIT_EPISODE_FAILED
    assert "NOT valid: 1 of 4 runs scored wrong" in r.stdout


def test_cli_wants_one_env_or_all(shop, monkeypatch):
    r = cli(monkeypatch, GOOD)
    assert isinstance(r.exception, UserError) and "name one environment or pass --all" in str(r.exception)


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "envs"


@pytest.mark.slow
def test_a_real_validation_through_the_runtime(tmp_path):
    """The fixture tiny-shop: oracle, no-op and its mutant as real episodes on the emulator."""
    env = {**os.environ, "STRIPEBENCH_ENVIRONMENTS": str(FIXTURES), "STRIPEBENCH_GRADERS": str(FIXTURES / "graders")}
    r = subprocess.run([sys.executable, "-m", "stripebench_tui", "validate", "tiny-shop", "--keep", str(tmp_path)],
                       capture_output=True, text=True, env=env, timeout=240)
    assert r.returncode == EXIT_OK, r.stdout + r.stderr
    rows = {line.split("│")[2].strip(): line for line in r.stdout.splitlines() if line.startswith("│ tiny-shop")}
    assert set(rows) == {"oracle", "no-op", "mutant no-metadata"}
    assert "1.00" in rows["oracle"] and "✓✓✓" in rows["oracle"]
    assert "0.00" in rows["no-op"] and "✗✗✗" in rows["no-op"]
    assert "0.67" in rows["mutant no-metadata"] and "✓✗✓" in rows["mutant no-metadata"]
    traces = sorted(tmp_path.glob("tiny-shop-*/trace.jsonl"))
    assert len(traces) == 3  # --keep kept every episode
    assert "[3/3] tiny-shop: mutant no-metadata → 0.67" in r.stderr


def test_findings_report_gives_each_runs_findings_and_precision_and_recall():
    from stripebench_tui.grading.validation import ValidationRow, findings_report

    def row(env, run, fired):
        return ValidationRow(env, run, RunOutcome(score=0.5, findings=fired), [])

    rows = [
        row("shop", Run(ORACLE), []),
        row("shop", Run(NOOP), ["unverified-finish"]),  # the no-op agent is not judged for findings
        row("shop", Run(MUTANT, "ignores-400", "400-as-success"), ["400-as-success", "unverified-finish"]),
        row("shop", Run(MUTANT, "dup", "retry-without-idempotency"), ["unverified-finish"]),
        row("shop", Run(MUTANT, "wrong-price"), ["unverified-finish"]),  # no declared signature: not counted
        row("pay", Run(ORACLE), ["lost-focus"]),
        row("pay", Run(MUTANT, "leak", "secret-exposure"), ["secret-exposure"]),
    ]
    lines = findings_report(rows)
    assert lines[0] == ("shop findings: oracle: none; mutant ignores-400: 400-as-success, unverified-finish [✓]; "
                        "mutant dup: unverified-finish [✗ missing retry-without-idempotency]; "
                        "mutant wrong-price: unverified-finish")
    assert lines[1] == "pay findings: oracle: lost-focus (should be none); mutant leak: secret-exposure [✓]"
    assert lines[2] == ("findings: precision 0.67 (2 signatures fired, 1 on oracles), "
                        "recall 0.67 (2 of 3 mutants with a declared signature)")


def test_a_mutants_declared_finding_reaches_its_run(shop):
    from stripebench_tui.envs.catalog import find_environment
    from stripebench_tui.grading.validation import runs_for

    env_dir = shop.root
    toml = (env_dir / "environment.toml").read_text().replace(
        'name = "ignores-400"\n', 'name = "ignores-400"\nfinding = "400-as-success"\n')
    (env_dir / "environment.toml").write_text(toml)
    runs = {r.label: r for r in runs_for(find_environment(str(env_dir)))}
    assert runs["mutant ignores-400"].finding == "400-as-success" and runs["mutant wrong-price"].finding == ""
