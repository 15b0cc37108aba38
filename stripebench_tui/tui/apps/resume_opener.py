"""Resuming from the TUI (``EpisodeScreen.ResumeRequested``, the resume key on an episode that ended without an
end event): the same as ``stripebench resume EPISODE``, shown on a live screen instead of printed."""

from __future__ import annotations

from typing import Any

from textual.app import App

from stripebench_tui.core.trace import TraceError
from stripebench_tui.errors import UserError
from stripebench_tui.formats.open import open_episode
from stripebench_tui.runtime.fork import summary_of
from stripebench_tui.runtime.reaper import tagged_pids
from stripebench_tui.runtime.resume import resumable_checkpoint, resume_config, resumed_episode
from stripebench_tui.tui.screens.episode_screen import EpisodeScreen
from stripebench_tui.tui.screens.live_screen import LiveEpisodeScreen


def open_resume(app: App[Any], request: EpisodeScreen.ResumeRequested) -> None:
    """Continue the episode from its last checkpoint on a live screen; a notification says why not (it ended, it
    kept no checkpoint, its processes still run, its trace cannot be read)."""
    try:
        trace = open_episode(request.trace_path)
        running = still_running(trace.header.extra)
        if running:
            raise UserError(f"{request.trace_path}: the episode has not died: {len(running)} of its processes still "
                            f"run (pid {', '.join(str(p) for p in running[:5])}); not resuming it")
        resumable_checkpoint(trace)
        config = resume_config(trace, headless=False)
        live = LiveEpisodeScreen(lambda source: resumed_episode(trace, config, summary_of, [source]),
                                 exit_app_on_quit=False)
    except (UserError, TraceError) as exc:
        app.notify(str(exc), title="Resume", severity="error", markup=False)
        return
    app.push_screen(live)


def still_running(extra: dict[str, object]) -> list[int]:
    """Pids of live processes of the episode whose header ``extra`` this is (its services, tool servers and shells
    carry its process tag while it runs, on this machine)."""
    tag = extra.get("process_tag") if isinstance(extra, dict) else None
    return tagged_pids(tag) if isinstance(tag, str) and tag else []


__all__ = ["open_resume", "still_running"]
