"""``stripebench checkpoints``: the checkpoints an episode kept, with their disk use."""

from __future__ import annotations

from pathlib import Path

import typer


def checkpoints(
    episode: Path = typer.Argument(..., metavar="EPISODE", help="An episode directory (or its trace.jsonl)."),
) -> None:
    """List the episode's checkpoints: turn, files, what each added on disk, how long it took; then the total.

    Exit code 0, or 4 when the episode kept none. Example: `stripebench checkpoints episodes/X`
    """
    # The trace reader and the runtime's checkpoints (pydantic, httpx, rich) load only when this command runs:
    # cli imports every command module at start-up
    from stripebench_tui.formats.open import open_episode
    from stripebench_tui.runtime.bisect import checkpointed_turns
    from stripebench_tui.runtime.checkpoints import checkpoints_dir, du, human_bytes, list_checkpoints

    trace_path = Path(open_episode(episode).path)
    checkpointed_turns(trace_path, "nothing to list")  # exit 4, one line, when there are none
    print(f"{'turn':>5} {'files':>6} {'new files':>10} {'state':>10} {'on disk':>10} {'took':>8}")
    for info in list_checkpoints(trace_path):
        print(f"{info.turn:>5} {info.files:>6} {human_bytes(info.bytes_new):>10} {human_bytes(info.bytes_own):>10} "
              f"{human_bytes(info.disk_bytes):>10} {info.seconds * 1000:>6.0f}ms")
    print(f"total {human_bytes(du(checkpoints_dir(trace_path)))} in {checkpoints_dir(trace_path)}")


def register(app: typer.Typer) -> None:
    """Add ``checkpoints`` to the CLI."""
    app.command("checkpoints")(checkpoints)


__all__ = ["checkpoints", "register"]
