"""``stripebench report``: one self-contained HTML file (or Markdown) telling what happened in an episode."""

from __future__ import annotations

import sys
import tempfile
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from stripebench_tui.commands.output import write_new
from stripebench_tui.commands.replay import sample_or_path
from stripebench_tui.errors import UserError

if TYPE_CHECKING:
    from stripebench_tui.core.trace import Trace
    from stripebench_tui.formats.report_recording import EmbeddedRecording


class ReportFormat(StrEnum):
    html = "html"
    md = "md"


def report(
    episode: Path = typer.Argument(..., metavar="EPISODE", help="An episode directory, its trace.jsonl, or an ATIF file."),
    output: str = typer.Option("", "--output", "-o", help="Where to write; '-' for stdout. Default: EPISODE's name "
                               "with .report.html (or .report.md), in the current directory."),
    fmt: ReportFormat = typer.Option(ReportFormat.html, "--format", "-f", help="html: one file that opens in any "
                                     "browser with no network; md: Markdown to paste into an issue."),
    force: bool = typer.Option(False, "--force", help="Overwrite the output file if it exists."),
    cast: Path = typer.Option(None, "--cast", help="html: play this recording (`stripebench export --format cast`) in "
                              "the report, synced with its turns."),
    recording: bool = typer.Option(False, "--recording", help="html: film the episode now (as `export --format cast`, "
                                   "at --speed) and play it in the report."),
    speed: float = typer.Option(2.0, "--speed", min=0.01, max=1000.0, help="With --recording: presenter speed."),
) -> None:
    """Write a report of an episode: score, verdict timeline chart, every turn, Stripe objects, screenshots, notes.

    The HTML report is one file with everything inline (CSS, the chart as SVG, screenshots), so it can be
    mailed or attached and opened offline. With --cast or --recording it also plays the TUI's recording in
    asciinema's player (installed once from npm into the user cache, then inlined): clicking a turn, a finding or
    a verdict band seeks it there, and the turn playing is highlighted. Each turn has an anchor (`report.html#turn-12`).
    Secrets are redacted; long tool outputs keep their first and last lines, and any other text is cut at 64 KiB with a
    line saying how much more the trace holds. A screenshot that leads outside the episode directory (`..`,
    a link) or is not a regular file is named as refused, never read.

    Example: `stripebench report replays/checkout-migration-400 -o report.html`;
    for an issue: `stripebench report episodes/X --format md -o -`;
    with the TUI playing: `stripebench report replays/checkout-migration-400 --recording`
    """
    # The trace reader and the report's builders (jinja2, rich) load only when a report is made: cli imports every
    # command module at start-up
    from stripebench_tui.formats.episode_report import build_report
    from stripebench_tui.formats.open import open_episode
    from stripebench_tui.formats.report_html import render_report

    episode = sample_or_path(episode)
    suffix = f".report.{fmt.value}"
    stem = episode.name if episode.is_dir() else episode.name.removesuffix(".jsonl")
    out = None if output == "-" else Path(output) if output else Path(stem + suffix)
    if out is not None and out.exists() and not force:
        raise UserError(f"{out}: already exists (use --force to overwrite)")  # before reading a large trace
    trace = open_episode(episode)
    if out is not None and out.resolve() in (Path(trace.path).resolve(), Path(episode).resolve()):
        raise UserError(f"{out}: that is the episode itself; choose another output path")
    if (cast is not None or recording is True) and fmt is not ReportFormat.html:
        raise UserError("--cast and --recording go into the HTML report; drop --format md")
    if cast is not None and recording is True:
        raise UserError("give --cast FILE or --recording, not both")
    built = build_report(trace, embed_images=fmt is ReportFormat.html)  # Markdown names screenshots, reads none
    embedded = None
    if cast is not None or recording is True:
        embedded = _recording(trace, episode, stem, cast if isinstance(cast, Path) else None, speed)
    text = render_report(built, fmt.value, embedded)
    if out is None:
        sys.stdout.write(text)
        return
    write_new(out, text, force)
    typer.echo(f"wrote {out} ({len(built.turns)} turns, {len(text.encode('utf-8')):,} bytes)", err=True)


def _recording(trace: Trace, episode: Path, stem: str, cast: Path | None, speed: float) -> EmbeddedRecording:
    """The recording to embed: ``cast`` as given, else one filmed now into a temporary file."""
    # the player's assets and the cast module load only for --cast or --recording
    from stripebench_tui.formats.report_recording import embed_recording

    if cast is not None:
        return embed_recording(cast)
    # the recorder (formats.text, the cast writer) loads only when a recording is filmed now
    from stripebench_tui.commands.recording import RecordingPlayback, record_to

    with tempfile.TemporaryDirectory(prefix="stripebench-report-") as folder:
        path = Path(folder) / f"{stem}.cast"
        record_to(trace, episode, stem, path, RecordingPlayback(speed=speed))
        return embed_recording(path)


def register(app: typer.Typer) -> None:
    """Add ``report`` to the CLI."""
    app.command("report")(report)
