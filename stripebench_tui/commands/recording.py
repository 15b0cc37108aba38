"""``stripebench export --format cast|gif``: which turns a recording plays, and writing it without clobbering.

Not a command of its own: ``export`` and ``report`` import it only when they film, so what it imports at its top
(formats.text, the cast writer) weighs on no command's start-up.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from stripebench_tui.commands.run import parse_breaks
from stripebench_tui.errors import UserError
from stripebench_tui.formats.cast import CastOptions, CastStats, parse_size, record_cast
from stripebench_tui.formats.gif import agg_path, render_gif
from stripebench_tui.formats.text import summary_pass

if TYPE_CHECKING:
    from stripebench_tui.core.trace import Trace


@dataclass(frozen=True)
class RecordingPlayback:
    """The playback options as typed (the same names as `replay`'s where they exist)."""

    size: str = "160x45"
    speed: float = 1.0
    from_turn: int | None = None
    to_turn: int | None = None
    until: str | None = None
    idle_limit: float = 2.0


def turn_range(trace: Trace, playback: RecordingPlayback) -> tuple[list[int], str]:
    """The turns the recording plays and, when ``--until`` cut them, why (else "")."""
    numbers = list(trace.index().turns)
    first, last = playback.from_turn, playback.to_turn
    why = ""
    if isinstance(playback.until, str) and playback.until.strip():
        try:
            (expr,) = parse_breaks([playback.until])
        except UserError as exc:
            raise UserError(str(exc).replace("--break", "--until", 1)) from None
        hits = [h for h in (summary_pass(trace, [expr]).hits or []) if first is None or h.turn >= first]
        if not hits:
            typer.echo(f"--until {expr!r}: it never happens in the turns asked for; recording them all", err=True)
        else:
            last = hits[0].turn if last is None else min(last, hits[0].turn)
            why = f"until turn {hits[0].turn} ({hits[0].reason})"
    turns = [n for n in numbers if (first is None or n >= first) and (last is None or n <= last)]
    if not turns:
        raise UserError(f"no turn of this episode lies in {first if first is not None else 'the start'}.."
                        f"{last if last is not None else 'the end'} (its turns: {numbers[0]}..{numbers[-1]})"
                        if numbers else "this episode has no turns to record")
    return turns, why


def cast_options(trace: Trace, playback: RecordingPlayback) -> tuple[CastOptions, list[int], str]:
    """The recorder's options for ``playback`` on ``trace``, the turns it plays and what ``--until`` did."""
    cols, rows = parse_size(playback.size)
    turns, why = turn_range(trace, playback)
    return CastOptions(cols=cols, rows=rows, speed=playback.speed, from_turn=turns[0], to_turn=turns[-1],
                       idle_limit=playback.idle_limit), turns, why


def write_atomically(out: Path, force: bool, write: Callable[[Path], object]) -> None:
    """Have ``write`` fill a temporary file beside ``out``, then move it into place (nothing half-written is left).

    An existing ``out`` is refused unless ``force``.
    """
    if out.exists() and not force:
        raise UserError(f"{out}: already exists (use --force to overwrite)")
    folder = out.resolve().parent
    if not folder.is_dir():
        raise UserError(f"{out}: cannot write (no directory {folder})")
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", dir=folder)
    os.close(fd)
    try:
        write(Path(tmp))
        os.replace(tmp, out)
    finally:
        Path(tmp).unlink(missing_ok=True)


def record_to(trace: Trace, trace_path: Path, name: str, path: Path, playback: RecordingPlayback) -> CastStats:
    """Film ``trace`` into the asciicast file ``path``, saying on stderr what it is doing."""
    options, turns, why = cast_options(trace, playback)
    typer.echo(f"recording {name}: turns {turns[0]}..{turns[-1]} ({len(turns)}) at ×{playback.speed:g} in a "
               f"{options.cols}x{options.rows} terminal{', ' + why if why else ''}…", err=True)
    return record_cast(trace_path, path, name, trace.header, len(turns), options)


def export_cast(trace: Trace, trace_path: Path, name: str, out: Path, playback: RecordingPlayback, force: bool) -> None:
    """``export --format cast``: the recording written to ``out``."""
    stats: list[CastStats] = []
    write_atomically(out, force, lambda tmp: stats.append(record_to(trace, trace_path, name, tmp, playback)))
    s = stats[0]
    typer.echo(f"wrote {out} ({s.events} events, {s.duration:.1f} s, {out.stat().st_size / 1024:.0f} KiB; "
               f"filmed in {s.wall:.1f} s)", err=True)


def export_gif(trace: Trace, trace_path: Path, name: str, out: Path, playback: RecordingPlayback, force: bool,
               max_mb: float) -> None:
    """``export --format gif``: the recording rendered to ``out`` within ``max_mb`` megabytes."""
    agg_path()  # missing, it is said before the filming, not after
    with tempfile.TemporaryDirectory(prefix="stripebench-gif-") as folder:
        cast = Path(folder) / f"{name}.cast"
        stats = record_to(trace, trace_path, name, cast, playback)
        typer.echo(f"rendering {stats.events} events ({stats.duration:.1f} s) to a GIF, at most {max_mb:g} MB…", err=True)
        rendered = []
        write_atomically(out, force, lambda tmp: rendered.append(render_gif(cast, tmp, max_mb=max_mb,
                                                                            idle_limit=playback.idle_limit)))
    g = rendered[0]
    typer.echo(f"wrote {out} ({g.bytes / 1048576:.2f} MB at {g.fps} frame(s) a second"
               f"{f', after {g.attempts} tries' if g.attempts > 1 else ''})", err=True)


__all__ = ["RecordingPlayback", "cast_options", "export_cast", "export_gif", "record_to", "turn_range", "write_atomically"]
