"""``stripebench agents``: list the agents (with which external harnesses are installed) and install a harness."""

from __future__ import annotations

import typer

agents_app = typer.Typer(help="The agents, and the external harnesses they can run (install, list).", no_args_is_help=True)


@agents_app.command("list")
def list_agents() -> None:
    """Every agent name; for external harnesses, whether it is installed and how to install it."""
    # The agents' registry and the harnesses (the model gateway, Starlette) load only when this command runs:
    # cli imports every command module at start-up
    from stripebench_tui.agents import agent_names, describe_agent
    from stripebench_tui.harness.harnesses import HARNESSES

    for name in agent_names():
        line = f"{name:<14} {describe_agent(name)}"
        harness = HARNESSES.get(name)
        if harness is not None:
            where = harness.locate()
            line += f" [installed: {where}]" if where else f" [not installed: {harness.install}]"
        typer.echo(line)


@agents_app.command("install")
def install(name: str = typer.Argument(..., metavar="HARNESS", help="claude-code, codex or mini-swe-agent")) -> None:
    """Install an external harness at its pinned version into the stripebench cache: npm for Claude Code and Codex
    CLI, a virtualenv of its own (pip) for mini-swe-agent. `stripebench doctor` shows what is installed.

    Example: `stripebench agents install mini-swe-agent`
    """
    from stripebench_tui.harness.harnesses import install_harness  # the gateway and Starlette: only when installing

    typer.echo(f"installing {name} …", err=True)
    prefix = install_harness(name)
    typer.echo(f"installed {name} in {prefix}")


def register(app: typer.Typer) -> None:
    """Add ``agents`` to the CLI."""
    app.add_typer(agents_app, name="agents")


__all__ = ["register"]
