"""The ``stripebench`` command line.

Each command lives in its own module under ``stripebench_tui.commands`` and
registers itself on the shared Typer app; heavy imports happen inside the
command so that ``--help`` stays instant.
"""

from __future__ import annotations

import importlib
import sys

import typer

from stripebench_tui import __version__
from stripebench_tui.core.sanitize import sanitize
from stripebench_tui.errors import UserError

app = typer.Typer(
    name="stripebench",
    help=(
        "Watch, replay and debug AI agent episodes on Stripe integration tasks.\n\n"
        "Start with `stripebench run checkout-migration` for a live episode, `stripebench replay replays/checkout-migration-400` "
        "to step through a recorded one, "
        "or `stripebench COMMAND --help` for any command."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)

# Command modules, each exposing ``register(app)``. Order is the order in --help.
COMMAND_MODULES: list[str] = ["stripebench_tui.commands.replay", "stripebench_tui.commands.diff",
                              "stripebench_tui.commands.serve", "stripebench_tui.commands.export",
                              "stripebench_tui.commands.report", "stripebench_tui.commands.emulator",
                              "stripebench_tui.commands.run", "stripebench_tui.commands.resume",
                              "stripebench_tui.commands.bisect", "stripebench_tui.commands.checkpoints",
                              "stripebench_tui.commands.envs", "stripebench_tui.commands.grade",
                              "stripebench_tui.commands.validate", "stripebench_tui.commands.images",
                              "stripebench_tui.commands.doctor", "stripebench_tui.commands.agents",
                              "stripebench_tui.commands.batch", "stripebench_tui.commands.scorecard",
                              "stripebench_tui.commands.review", "stripebench_tui.commands.search"]


def _version(value: bool) -> None:
    if value:
        typer.echo(f"stripebench {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """Watch, replay and debug AI agent episodes on Stripe integration tasks."""


def _register_all() -> None:
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(app)


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``stripebench`` console script."""
    _register_all()
    try:
        app(args=argv, standalone_mode=True)
    except UserError as exc:
        typer.echo(f"stripebench: {sanitize(str(exc))}", err=True)  # it may quote a file's name or content
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        typer.echo("stripebench: interrupted", err=True)
        sys.exit(130)
    except Exception as exc:
        # The emulator (its own distribution) reports what the user can fix as its own EmulatorProblem; that module
        # is loaded only if the emulator was, so a command that never started one has nothing to look up here.
        emulator = sys.modules.get("stripebench_emulator")  # its front, never one of its modules
        if emulator is None or not isinstance(exc, emulator.EmulatorProblem):
            raise
        typer.echo(f"stripebench: {sanitize(str(exc))}", err=True)
        sys.exit(exc.exit_code)
