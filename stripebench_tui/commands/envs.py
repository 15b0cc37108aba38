"""``stripebench envs``: list the environments an episode can run."""

from __future__ import annotations

import json

import typer


def envs(as_json: bool = typer.Option(False, "--json", help="Print a JSON list instead of a table.")) -> None:
    """List the environments (id, category, title) that `stripebench run ENV` accepts.

    They come from the repository's environments/ directory, or $STRIPEBENCH_ENVIRONMENTS.

    Example: `stripebench envs --json`
    """
    from stripebench_tui.envs.manifest import environments_dir, list_environments

    found = list_environments()
    if as_json:
        rows = [{"id": e.id, "category": e.manifest.category, "title": e.manifest.title, "summary": e.manifest.summary,
                 "path": str(e.root)} for e in found]
        typer.echo(json.dumps(rows, indent=2))
        return
    if not found:
        typer.echo(f"no environments in {environments_dir()}")
        return
    width = max(len(e.id) for e in found)
    cat_width = max(len(e.manifest.category) for e in found)
    for e in found:
        typer.echo(f"{e.id:<{width}}  {e.manifest.category:<{cat_width}}  {e.manifest.title}")


def register(app: typer.Typer) -> None:
    """Add ``envs`` to the CLI."""
    app.command("envs")(envs)


__all__ = ["envs", "register"]
