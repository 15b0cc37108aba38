"""``stripebench resume``: continue an episode whose process died, from its last checkpoint."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import typer

from stripebench_tui.commands.run import play_headless
from stripebench_tui.errors import UserError


def resume(
    episode: Path = typer.Argument(..., metavar="EPISODE", help="The episode directory (or its trace.jsonl) of a run "
                                   "that ended without an episode_end event (killed, out of memory, machine restart)."),
    headless: bool = typer.Option(False, "--headless", help="Print the episode as it goes on (the only mode for now)."),
) -> None:
    """Continue a dead episode from its last checkpoint, with the same agent and options.

    The trace is cut where that checkpoint was taken (the events of the turn the process died in are moved to
    `trace.jsonl.d/dropped-after-N.jsonl` and the turn is played again), a `resume` event marks where the new
    process took over, and the episode goes on in the same directory. Exit codes as for `run`: 0 passed, 1 failed,
    2 the episode already ended, 4 no checkpoint to resume from.

    Example: `stripebench resume episodes/checkout-migration-20260101T120000Z --headless`
    """
    # The trace reader and the runtime (pydantic, httpx, Starlette, MCP) load only when a resume runs: cli imports every
    # command module at start-up
    from stripebench_tui.formats.open import open_episode
    from stripebench_tui.runtime.fork import summary_of
    from stripebench_tui.runtime.resume import resumable_checkpoint, resume_config, resumed_episode

    if headless is not True:
        raise UserError("resume prints the episode: add --headless (the TUI cannot attach to a resumed run yet)")
    trace = open_episode(episode)
    info = resumable_checkpoint(trace)  # one line before anything starts: ended, or no checkpoint
    config = resume_config(trace, headless=True)
    print(f"resuming {Path(trace.path).parent} from the checkpoint of turn {info.turn}", file=sys.stderr)

    def make(config, subscribers):
        return resumed_episode(trace, config, summary_of, subscribers)

    raise typer.Exit(asyncio.run(play_headless(config, make)))


def register(app: typer.Typer) -> None:
    """Add ``resume`` to the CLI."""
    app.command("resume")(resume)


__all__ = ["register", "resume"]
