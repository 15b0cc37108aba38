"""Playing one validation run (oracle, no-op or a mutant) as a real episode, for ``grading.validation.validate``.

``grading.validation`` holds the verdict logic and the table and takes the runner as
an argument; the runner lives here because it assembles an episode.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from stripebench_tui.core.events import Event, Finding, GraderVerdict
from stripebench_tui.envs.manifest import Environment
from stripebench_tui.grading.validation import MUTANT, NOOP, Run, RunOutcome
from stripebench_tui.runtime.episode import EpisodeConfig, run_episode


async def episode_runner(env: Environment, run: Run, *, keep: Path | None = None,
                         on_turn: Callable[[int], None] | None = None) -> RunOutcome:
    """Play ``run`` as a real episode on the emulator through the runtime; final statuses from its verdicts.

    ``on_turn`` hears each new turn number as the episode reaches it (for a progress display).
    """
    final: dict[str, str] = {}
    found: list[str] = []
    turns = [0]

    def collect(event: Event) -> None:
        if isinstance(event, GraderVerdict) and event.final:
            final[event.criterion] = event.status
        if isinstance(event, Finding) and event.detector not in found:
            found.append(event.detector)
        if on_turn is not None and event.turn > turns[0]:
            turns[0] = event.turn
            on_turn(event.turn)

    agent = "noop" if run.kind == NOOP else "oracle"
    options = {"plan": run.plan} if run.kind == MUTANT else {}
    with tempfile.TemporaryDirectory(prefix="stripebench-validate-") as tmp:
        root = keep or Path(tmp)
        started = time.monotonic()
        result = await run_episode(EpisodeConfig(env=env, agent=agent, agent_options=options, episodes_root=root,
                                                 headless=True), subscribers=[collect])
        duration = time.monotonic() - started
    error = ""
    if result.setup_failed:
        error = f"setup failed: {result.error}"
    elif result.reason == "error":
        error = f"episode error: {result.error}"
    elif result.score is None:
        error = "the episode was not graded"
    return RunOutcome(score=result.score, statuses=final, duration=duration, error=error,
                      trace_path=result.trace_path if keep else None, findings=found)


__all__ = ["episode_runner"]
