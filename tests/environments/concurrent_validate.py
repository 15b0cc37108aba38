"""Validate one environment with its runs played side by side (each is its own episode: emulator, app, tools).

The runs share nothing, so playing them at once keeps an environment's validate test within its time budget;
the verdict per run is the one ``stripebench validate`` gives (``Run.meets``), and the findings are checked as
``helpers.validate_failing`` checks them (``assert_findings``).
"""

from __future__ import annotations

import asyncio

from stripebench_tui.core.events import PASS
from tests.environments.helpers import assert_findings


def validate_failing_concurrently(env) -> dict[str, tuple[float | None, set[str]]]:
    """Play the oracle, the no-op agent and every mutant at once; assert every run behaved, the oracle fired no
    finding and each mutant its declared signature; map each label to (score, non-passing criteria)."""
    from stripebench_tui.grading.validation import ValidationRow, runs_for
    from stripebench_tui.runtime.validate import episode_runner

    runs = runs_for(env)

    async def play():
        return await asyncio.gather(*(episode_runner(env, run) for run in runs))

    outcomes = asyncio.run(play())
    wrong = [(run.label, out.score, out.error) for run, out in zip(runs, outcomes, strict=True)
             if out.error or not run.meets(out.score)]
    assert not wrong, wrong
    assert_findings([ValidationRow(env.id, run, out, list(out.statuses)) for run, out in zip(runs, outcomes, strict=True)])
    return {run.label: (out.score, {name for name, status in out.statuses.items() if status != PASS})
            for run, out in zip(runs, outcomes, strict=True)}
