"""``stripebench bisect``: from which turn could this run still have been rescued?"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import typer

from stripebench_tui.commands.run import agent_options
from stripebench_tui.formats.bisect_record import BisectRecord, ProbeRecord, write_bisect


def bisect(
    episode: Path = typer.Argument(..., metavar="EPISODE", help="A recorded episode (directory or trace.jsonl) "
                                   "with checkpoints (`run --checkpoint every`, the default)."),
    agent: str = typer.Option(..., "--agent", "-a", help="Who continues each fork: oracle, anthropic, openai, noop."),
    hint: str = typer.Option(None, "--hint", help="Told to the agent, as an operator message, at the start of each "
                             "fork (e.g. what the grader complained about)."),
    runs: int = typer.Option(1, "--runs", min=1, help="Forks per probed turn; a turn passes when at least half do."),
    model: str = typer.Option(None, "--model", help="LLM agents: the model."),
    base_url: str = typer.Option(None, "--base-url", help="LLM agents: the provider's base URL."),
    plan: str = typer.Option(None, "--plan", help="Oracle only: continue with this mutant's plan."),
    out: Path = typer.Option(None, "--out", help="Where the forks go (default EPISODE/bisect/)."),
) -> None:
    """Search the episode's checkpoints for the last turn from which a fork continued by --agent still passes.

    Assumes that once forks from a turn fail, forks from later turns do too (the mistake is made by then): probes
    the first and last checkpointed turns, then halves. Prints each probe (turn, scores, fork directories) as it
    ends and, last, the turn; the result is kept beside the trace (`trace.jsonl.d/bisect.json`), where the TUI's
    timeline marks the turn. Exit code 0 when some turn still passes, 1 when none does, 4 without checkpoints.

    Example: `stripebench bisect episodes/X --agent oracle` (deterministic on our environments);
    `stripebench bisect episodes/X --agent anthropic --runs 3 --hint 'the webhook must verify signatures'`
    """
    # The trace reader (the findings) and the runtime (pydantic, httpx, rich) load only when a bisect runs:
    # cli imports every command module at start-up
    from stripebench_tui.formats.open import open_episode
    from stripebench_tui.runtime.bisect import bisect_turns, checkpointed_turns, probe_fork

    trace = open_episode(episode)
    trace_path = Path(trace.path)
    turns = checkpointed_turns(trace_path)
    root = out if isinstance(out, Path) else trace_path.parent / "bisect"
    options = agent_options(agent, plan if isinstance(plan, str) else None, model if isinstance(model, str) else None,
                            base_url if isinstance(base_url, str) else None, None)
    print(f"bisect {trace_path.parent}: checkpoints at turns {turns[0]}..{turns[-1]} ({len(turns)}), "
          f"agent {agent}, {runs} run{'s' if runs > 1 else ''} per turn", flush=True)

    def said(turn: int, run: int, result) -> None:
        verdict = "passed" if result.passed else "failed"
        score = "-" if result.score is None else f"{result.score:.2f}"
        print(f"  fork at turn {turn} run {run}: score {score} {verdict} ({result.episode_dir})", flush=True)

    probe = probe_fork(trace_path, agent, options=options, runs=runs, hint=hint if isinstance(hint, str) else "",
                       root=root, on_fork=said)
    found = asyncio.run(bisect_turns(turns, probe))
    print("probed:")
    for p in found.probes:
        scores = ", ".join("-" if s is None else f"{s:.2f}" for s in p.scores)
        print(f"  turn {p.turn}: {'passes' if p.passed else 'fails'} (scores {scores})")
    forks = sum(len(p.forks) for p in found.probes)
    record = BisectRecord(agent, found.last_passing, [ProbeRecord(p.turn, p.passed, list(p.scores),
                                                                  [str(f) for f in p.forks]) for p in found.probes])
    try:
        write_bisect(trace_path, record)  # the TUI marks the turn on the timeline, the report names it
    except OSError as exc:
        print(f"(not kept beside the trace: {exc.strerror})", file=sys.stderr)
    if found.last_passing is None:
        print(f"no checkpointed turn rescues the run: a fork from turn {turns[0]} already fails ({forks} forks)")
        raise typer.Exit(1)
    print(f"last turn from which {agent} still passes: {found.last_passing} ({forks} forks under {root})")
    sys.stdout.flush()


def register(app: typer.Typer) -> None:
    """Add ``bisect`` to the CLI."""
    app.command("bisect")(bisect)


__all__ = ["bisect", "register"]
