"""``stripebench export``: write a trace in another format (Harbor's ATIF)."""

from __future__ import annotations

import json
import sys
from enum import Enum
from pathlib import Path

import typer

from stripebench_tui.errors import UserError
from stripebench_tui.commands.output import write_new


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
    from stripebench_tui.formats.atif import atif_from_trace

    from stripebench_tui.commands.replay import sample_or_path

    trace_path = sample_or_path(trace_path)
    trace = open_episode(trace_path)
    doc = atif_from_trace(trace)
    text = json.dumps(doc, ensure_ascii=False, indent=2) + "\n"
    if output == "-":
        sys.stdout.write(text)
        return
    # An episode directory is named after its episode; its trace file is always trace.jsonl.
    stem = trace_path.name if trace_path.is_dir() else trace_path.name.removesuffix(".jsonl")
    out = Path(output) if output else Path(stem + ".atif.json")
    if out.resolve() == trace_path.resolve():
        raise UserError(f"{out}: that is the trace itself; choose another output path")
    write_new(out, text, force)
    typer.echo(f"wrote {out} ({len(doc['steps'])} ATIF steps)", err=True)


def register(app: typer.Typer) -> None:
    """Add ``export`` to the CLI."""
    app.command("export")(export)
