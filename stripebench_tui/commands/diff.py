"""``stripebench diff A B``: compare two episodes (text, or the TUI's diff screen with --tui)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from stripebench_tui.commands.replay import sample_or_path
from stripebench_tui.errors import EXIT_EPISODE_FAILED, EXIT_OK


def load_state(path: Path) -> Any:
    """What the diff compares of the episode at ``path`` (a trace, its directory or an ATIF file): its
    ``core.diff.EpisodeDigest``. One that cannot be read is a ``BadFileError`` (exit 3), as for every command."""
    # The diff's reducer and the trace reader (the findings) load only when a diff runs: cli imports every command
    # module at start-up
    from stripebench_tui.core.episode_diff import digest
    from stripebench_tui.formats.open import open_episode

    trace = open_episode(sample_or_path(path))
    # One pass keeping per call its tool, arguments and outcome, not the reducer's whole state: any length fits.
    return digest(trace.iter_events(), trace.header)


def diff(
    a: Path = typer.Argument(..., metavar="A", help="The first episode: a trace (.jsonl), its directory, or an ATIF file."),
    b: Path = typer.Argument(..., metavar="B", help="The second episode, compared with A."),
    show_all: bool = typer.Option(False, "--all", help="List every aligned turn, not only the differences and their neighbours."),
    tui: bool = typer.Option(False, "--tui", help="Open the diff screen: aligned turns side by side, verdicts and objects."),
) -> None:
    """Compare two episodes: turns aligned by their tool calls, the first divergence, verdict timelines and final
    Stripe objects field by field (ids, timestamps and each run's paths and ports left out).

    Exit code 0 when the two are equivalent, 1 when they differ, 2 for bad usage, 3 when an input cannot be read.

    Example: `stripebench diff replays/checkout-migration-oracle replays/checkout-migration-400`
    (the oracle against the run that called an HTTP 400 a success); a fork against its origin works the same way.
    """
    from stripebench_tui.core.episode_diff import diff_states  # only when a diff runs (see load_state)

    result = diff_states(load_state(a), load_state(b))
    if tui is True:
        from stripebench_tui.tui.apps.diff_app import run_diff  # Textual loads only for --tui

        run_diff(result, (str(a), str(b)))
    else:
        from stripebench_tui.formats.diff_text import write_diff  # the text report, only when it is printed

        write_diff(result, sys.stdout, (str(a), str(b)), show_all=show_all is True)
        sys.stdout.flush()
    raise typer.Exit(EXIT_OK if result.equivalent else EXIT_EPISODE_FAILED)


def register(app: typer.Typer) -> None:
    """Add ``diff`` to the CLI."""
    app.command("diff")(diff)


__all__ = ["diff", "load_state", "register"]
