"""``stripebench validate``: prove environments gradable (oracle 1.0, no-op 0, every mutant below 1.0)."""

from __future__ import annotations

import asyncio
import functools
import sys
from pathlib import Path

import typer

from stripebench_tui.errors import EXIT_EPISODE_FAILED, EXIT_OK, UserError


def validate(
    env_id: str | None = typer.Argument(None, metavar="ENV", help="Environment id (or path to its directory)."),
    all_envs: bool = typer.Option(False, "--all", help="Validate every environment."),
    keep: Path | None = typer.Option(None, "--keep",
                                     help="Keep each run's episode directory (trace, workspace) under this directory."),
) -> None:
    """Run the oracle, the no-op agent and every mutant of an environment and check how the grader scores them.

    Passes (exit 0) only when the oracle scores 1.0, the no-op agent 0 and every mutant less than 1.0; exit 1 otherwise.
    Also prints which failure-mode findings fired on the oracle (should be none) and on each mutant (its declared
    `finding = "…"` signature should), with precision and recall over all mutants; these do not change the exit code.

    Example: `stripebench validate checkout-migration`, or `stripebench validate --all`
    """
    # rich, the environments (pydantic) and the runtime (httpx, Starlette, MCP) load only when validating:
    # cli imports every command module at start-up
    from rich.console import Console

    from stripebench_tui.envs.catalog import find_environment, list_environments
    from stripebench_tui.grading import validation
    from stripebench_tui.runtime.validate import episode_runner

    if all_envs == (env_id is not None):
        raise UserError("name one environment or pass --all")
    envs = list_environments() if all_envs else [find_environment(env_id)]  # type: ignore[arg-type]
    if not envs:
        raise UserError("no environments found")
    from stripebench_tui.findings import DETECTORS  # the detectors (findings), as loaded by the runtime above

    for env in envs:  # a mistyped signature would only show up as a miss after minutes of runs
        for m in env.manifest.mutants:
            if m.finding and m.finding not in DETECTORS:
                raise UserError(f"{env.id}: mutant {m.name} declares finding {m.finding!r}; "
                                f"known findings: {', '.join(DETECTORS)}")
    err = Console(file=sys.stderr, markup=False, highlight=False, emoji=False)
    keep_dir = keep.resolve() if keep else None
    if err.is_terminal:  # a spinner with the running episode's turn; plain lines when piped
        with err.status("") as status:
            current = [""]

            def progress(line: str) -> None:
                current[0] = line
                if line.endswith("…"):
                    status.update(line)
                else:
                    err.print(line)

            runner = functools.partial(episode_runner, keep=keep_dir,
                                       on_turn=lambda turn: status.update(f"{current[0]} turn {turn}"))
            rows = asyncio.run(validation.validate(envs, runner, progress=progress))
    else:
        runner = functools.partial(episode_runner, keep=keep_dir)
        rows = asyncio.run(validation.validate(envs, runner, progress=err.print))
    out = Console(file=sys.stdout, markup=False, highlight=False, emoji=False, width=None if sys.stdout.isatty() else 140)
    out.print(validation.validation_table(rows))
    for line in validation.legend(rows) + validation.findings_report(rows) + validation.warnings(rows):
        out.print(line)
    ok = validation.all_ok(rows)
    wrong = sum(1 for r in rows if not r.ok)
    out.print("valid: every run scored as expected" if ok else f"NOT valid: {wrong} of {len(rows)} runs scored wrong")
    raise typer.Exit(EXIT_OK if ok else EXIT_EPISODE_FAILED)


def register(app: typer.Typer) -> None:
    """Add ``validate`` to the CLI."""
    app.command("validate")(validate)


__all__ = ["register", "validate"]
