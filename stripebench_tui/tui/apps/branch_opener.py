"""What the fork tree asks of the app (``ForkTreeScreen.OpenBranch``, ``DiffBranches``), for every app that shows
episodes: a branch opens as a replay above the tree (Esc comes back to it), two branches open in the diff screen.
Read-only throughout: opening and diffing only read traces, so a ``serve`` viewer may do both (its replays stay
read-only)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.app import App

from stripebench_tui.core.episode_diff import EpisodeDiff, diff_states, digest
from stripebench_tui.core.trace import TraceError
from stripebench_tui.formats.open import open_episode
from stripebench_tui.tui.screens.diff_screen import DiffScreen
from stripebench_tui.tui.screens.episode_screen import EpisodeScreen, PlaybackOptions
from stripebench_tui.tui.sources.episode_source import TraceSource


def open_branch(app: App[Any], path: Path, *, read_only: bool = False) -> None:
    """Push a replay of the episode at ``path`` (a notification says why not, when it cannot be read)."""
    try:
        trace = open_episode(path)
    except (TraceError, OSError) as exc:
        app.notify(str(exc), title="Fork tree", severity="error", markup=False)
        return
    app.push_screen(EpisodeScreen(TraceSource(trace), PlaybackOptions(read_only=read_only)))


def branch_diff(a: Path, b: Path) -> EpisodeDiff:
    """The diff of two episodes, each read once as a stream (as ``stripebench diff`` does)."""
    first, second = open_episode(a), open_episode(b)
    return diff_states(digest(first.iter_events(), first.header), digest(second.iter_events(), second.header))


def diff_branches(app: App[Any], a: Path, b: Path) -> None:
    """Compute the diff off the UI thread, then push the diff screen (Esc returns)."""

    def work() -> None:
        try:
            diff = branch_diff(a, b)
        except (TraceError, OSError) as exc:
            app.call_from_thread(app.notify, str(exc), title="Diff", severity="error", markup=False)
            return
        labels = (_label(a), _label(b))
        app.call_from_thread(app.push_screen, DiffScreen(diff, labels, closable=True))

    app.notify(f"Comparing {_label(a)} with {_label(b)}…", title="Diff", timeout=2, markup=False)
    app.run_worker(work, thread=True, group="branch-diff", exclusive=True)


def _label(path: Path) -> str:
    return path.parent.name if path.name == "trace.jsonl" else path.name


__all__ = ["branch_diff", "diff_branches", "open_branch"]
