"""``stripebench export``: write a trace in another format (Harbor's ATIF)."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path

import typer

from stripebench_tui.errors import UserError
from stripebench_tui.commands.output import write_new_with


class ExportFormat(str, Enum):
    atif = "atif"


def export(
    trace_path: Path = typer.Argument(..., metavar="TRACE", help="The trace to export (.jsonl, or an ATIF file)."),
    fmt: ExportFormat = typer.Option(ExportFormat.atif, "--format", "-f", help="Output format: atif (Harbor's Agent Trajectory Interchange Format)."),
    output: str = typer.Option("", "--output", "-o", help="Where to write; '-' for stdout. Default: TRACE's name (or its episode directory's) with .atif.json, in the current directory."),
    force: bool = typer.Option(False, "--force", help="Overwrite OUT if it exists."),
) -> None:
    """Export a trace to Harbor's Agent Trajectory Interchange Format (ATIF) JSON.

    Stripe objects, verdicts and other events ATIF has no place for go under `extra.stripebench`,
    so `stripebench replay` opens the exported file with nothing lost.

    Example: `stripebench export replays/checkout-migration-oracle -o oracle.atif.json`
    """
    from stripebench_tui.formats.open import open_episode
    from stripebench_tui.formats.atif import AtifExport

    from stripebench_tui.commands.replay import sample_or_path

    trace_path = sample_or_path(trace_path)
    trace = open_episode(trace_path)
    # An episode directory is named after its episode; its trace file is always trace.jsonl.
    stem = trace_path.name if trace_path.is_dir() else trace_path.name.removesuffix(".jsonl")
    out = None if output == "-" else Path(output) if output else Path(stem + ".atif.json")
    if out is not None and out.resolve() == trace_path.resolve():
        raise UserError(f"{out}: that is the trace itself; choose another output path")
    export = AtifExport(trace)  # the first pass: a trace that cannot be read fails before anything is written
    if out is None:
        export.write(sys.stdout)
        return
    # Written as it is built (a document of a million events is never held whole).
    write_new_with(out, export.write, force)
    typer.echo(f"wrote {out} ({export.steps} ATIF steps)", err=True)


def register(app: typer.Typer) -> None:
    """Add ``export`` to the CLI."""
    app.command("export")(export)
