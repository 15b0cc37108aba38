"""Shared helpers for the environment tests: load a grader module directly, and run validate on one environment."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
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
