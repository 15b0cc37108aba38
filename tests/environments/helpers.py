"""Shared helpers for the environment tests: load a grader module, play a plan's file edits, run a seed in-process,
and run validate on one environment."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from stripebench_tui.core.events import PASS


def load_grader_module(env, filename: str, module_name: str) -> ModuleType:
    """The grader file graders/<filename> beside `env`, imported under `module_name` so tests can reach its internals."""
    spec = importlib.util.spec_from_file_location(module_name, env.root.parents[1] / "graders" / filename)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def validate_failing(env) -> dict[str, set[str]]:
    """Run validate on `env` (oracle, no-op, mutants), assert every run behaved, and map run label to its non-passing criteria."""
    from stripebench_tui.grading import validation
    from stripebench_tui.runtime.validate import episode_runner

    rows = asyncio.run(validation.validate([env], episode_runner))
    assert validation.all_ok(rows), [(r.run.label, r.outcome.score, r.outcome.error) for r in rows]
    assert_findings(rows)
    return {row.run.label: {name for name, status in row.outcome.statuses.items() if status != PASS} for row in rows}


def assert_findings(rows) -> None:
    """The oracle fires no finding; each mutant with a declared signature fires it."""
    from stripebench_tui.grading.validation import MUTANT, ORACLE

    for row in rows:
        if row.run.kind == ORACLE:
            assert row.outcome.findings == [], row.outcome.findings
        elif row.run.kind == MUTANT and row.run.finding:
            assert row.run.finding in row.outcome.findings, (row.run.label, row.outcome.findings)


def play_for_findings(env, mutants: list[str], keep: Path) -> dict[str, tuple]:
    """Play the oracle and the named mutants side by side (real episodes, traces kept under ``keep``); map each label
    to (its RunOutcome, its trace's events as dicts). Asserts each mutant declares a signature and no run failed."""
    import json

    from stripebench_tui.grading.validation import MUTANT, ORACLE, Run
    from stripebench_tui.runtime.validate import episode_runner

    declared = {m.name: m.finding for m in env.manifest.mutants}
    assert all(declared.get(name) for name in mutants), declared
    runs = [Run(ORACLE)] + [Run(MUTANT, name, declared[name]) for name in mutants]

    async def play():
        return await asyncio.gather(*(episode_runner(env, run, keep=keep / run.label.replace(" ", "-"))
                                      for run in runs))

    outcomes = asyncio.run(play())
    assert not [o.error for o in outcomes if o.error], [o.error for o in outcomes]
    out = {}
    for run, outcome in zip(runs, outcomes, strict=True):
        lines = outcome.trace_path.read_text(encoding="utf-8").splitlines()
        out[run.label] = (outcome, [json.loads(line) for line in lines if line])
    return out


def findings_in(events: list[dict], detector: str) -> list[dict]:
    """The ``finding`` events of ``detector`` in a trace read as dicts."""
    return [e for e in events if e.get("type") == "finding" and e.get("detector") == detector]


def played_files(env, plan) -> tuple[dict[str, str], int]:
    """The workspace's files after `plan`'s create_file and replace_in_file steps, played blind, and how many edits
    matched; an edit whose old text is not in its file exactly once fails the test."""
    from stripebench_tui.envs.plans import load_plan

    files = {str(p.relative_to(env.workspace)): p.read_text() for p in env.workspace.rglob("*") if p.is_file()}
    edits = 0
    for step in load_plan(env.path(plan.plan), env.root):
        if step.tool == "create_file":
            files[step.args["path"]] = step.args["content"]
        elif step.tool == "replace_in_file":
            text = files[step.args["path"]]
            assert text.count(step.args["old_text"]) == 1, step.say
            files[step.args["path"]] = text.replace(step.args["old_text"], step.args["new_text"])
            edits += 1
    return files, edits


def run_seed(seed_module, workspace: Path, url: str, key: str, monkeypatch) -> None:
    """Run the seed script's main() in-process, in `workspace` against the Stripe API at `url`, as the runtime would."""
    monkeypatch.setenv("STRIPE_API_BASE", url)
    monkeypatch.setenv("STRIPE_SECRET_KEY", key)
    monkeypatch.delenv("STRIPE_API_VERSION", raising=False)
    monkeypatch.chdir(workspace)
    seed_module.main()
