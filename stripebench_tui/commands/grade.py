"""``stripebench grade``: grade a finished episode directory with its environment's grader."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import typer

from stripebench_tui.errors import EXIT_EPISODE_FAILED, EXIT_OK, UserError


def _app_urls(pairs: list[str]) -> dict[str, str]:
    urls = {}
    for pair in pairs:
        name, sep, url = pair.partition("=")
        if not sep or not name or not url.startswith(("http://", "https://")):
            raise UserError(f"--app-url takes NAME=URL, e.g. APP_URL=http://127.0.0.1:5000 (got {pair!r})")
        urls[name] = url
    return urls


def grade(
    env_id: str = typer.Argument(..., metavar="ENV", help="Environment id (or path to its directory)."),
    episode: Path = typer.Option(..., "--episode", help="The finished episode's directory (holds trace.jsonl and workspace/)."),
    stripe_api_base: str | None = typer.Option(
        None, "--stripe-api-base", help="Read Stripe objects from this API base instead of the episode's backend."),
    stripe_key: str | None = typer.Option(None, "--stripe-key", help="Test-mode key (default: $STRIPE_SECRET_KEY)."),
    emulator_state: Path | None = typer.Option(None, "--emulator-state",
                                                  help="The episode emulator's state file (default: the episode's own)."),
    app_url: list[str] = typer.Option([], "--app-url",
                                      help="NAME=URL of an app already running (repeatable); then none is started."),
    services: bool = typer.Option(True, "--services/--no-services",
                                  help="Start the environment's services again, on a copy of the episode's workspace."),
) -> None:
    """Grade a finished episode: print each criterion's status, weight and evidence, then the score.

    Exit code 0 when the score is 1.0, 1 otherwise.

    Example: `stripebench grade checkout-migration --episode episodes/checkout-migration-20261129T120000Z`
    """
    # rich, the environments (pydantic) and the grading packages load only when grading: cli imports every command
    # module at start-up
    from rich.console import Console

    from stripebench_tui.envs.catalog import find_environment
    from stripebench_tui.grading.results_table import criteria_table
    from stripebench_tui.runtime.grade import grade_episode

    env = find_environment(env_id)
    err = Console(file=sys.stderr, markup=False, highlight=False, emoji=False)
    result = asyncio.run(grade_episode(env, episode, stripe_api_base=stripe_api_base, stripe_key=stripe_key,
                                       emulator_state=emulator_state, app_urls=_app_urls(app_url),
                                       services=services, progress=err.print))
    out = sys.stdout
    console = Console(file=out, markup=False, highlight=False, emoji=False, width=None if out.isatty() else 120)
    console.print(criteria_table(result.results.values(), title=f"{env.id} — graded against {result.backend}"))
    passing = sum(1 for r in result.results.values() if r.status == "pass")
    console.print(f"score {result.score:.2f} ({passing}/{len(result.results)} criteria pass) — "
                  + ("PASSED" if result.passed else "FAILED"))
    raise typer.Exit(EXIT_OK if result.passed else EXIT_EPISODE_FAILED)


def register(app: typer.Typer) -> None:
    """Add ``grade`` to the CLI."""
    app.command("grade")(grade)


__all__ = ["grade", "register"]
