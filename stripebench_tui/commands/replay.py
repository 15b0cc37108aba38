"""``stripebench replay``: step through a recorded episode, or print it for pipes and CI."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import typer

from stripebench_tui.commands.run import agent_options, external_options, parse_breaks, play_headless
from stripebench_tui.core.bus import Handler
from stripebench_tui.core.trace import Trace
from stripebench_tui.errors import EXIT_EPISODE_FAILED, EXIT_OK, UserError

if TYPE_CHECKING:  # the command loads the runtime only when it runs an episode
    from stripebench_tui.runtime.episode import Episode, EpisodeConfig, EpisodeResult


def replay(
    trace_path: Path = typer.Argument(..., metavar="TRACE", help="A trace (.jsonl), an ATIF trajectory (.json), or a "
                                      "batch directory (opens the grid of its episodes)."),
    headless: bool = typer.Option(False, "--headless", help="Print the episode turn by turn as text instead of opening the TUI."),
    summary: bool = typer.Option(False, "--summary",
                                 help="Print a summary table: turns, tools, verdict timeline, Stripe requests, findings, score."),
    speed: float = typer.Option(1.0, "--speed", min=0.01, max=1000.0, help="Playback speed relative to the recorded timing."),
    play: bool = typer.Option(False, "--play", help="Start playing immediately instead of paused at the first turn."),
    present: bool = typer.Option(False, "--present", help="Presenter mode: paced playback that dwells on verdict "
                                 "changes, a large high-contrast layout, captions, secrets and emails masked (P in the TUI)."),
    fork_at: int = typer.Option(None, "--fork-at", min=0, help="Continue live with --agent from the end of this turn: "
                                "restored from the episode's checkpoint of that turn when it has one (no turn runs "
                                "again), else by re-executing the recorded tool calls up to it on a fresh environment "
                                "(flagging the first divergence)."),
    reexecute: bool = typer.Option(False, "--reexecute", help="With --fork-at: re-execute turns 1..N even when a "
                                   "checkpoint could be restored (checks that they still do the same)."),
    agent: str = typer.Option(None, "--agent", "-a",
                              help="With --fork-at: who continues (human by default; oracle, noop, anthropic, "
                              "openai), or an external harness (claude-code) restarted with its model answered from the "
                              "episode's recording (model/exchanges.jsonl) for turns 1..N, then live."),
    agent_cmd: str = typer.Option(None, "--agent-cmd", help="With --fork-at: restart this harness command line (as for "
                                  "`run --agent-cmd`) the same way."),
    agent_protocol: str = typer.Option(None, "--agent-protocol",
                                       help="--agent-cmd: the API it speaks, anthropic (default) or openai."),
    model: str = typer.Option(None, "--model", help="With --fork-at: the model of the agent that continues."),
    base_url: str = typer.Option(None, "--base-url", help="With --fork-at: the live upstream after turn N (default: the "
                                 "provider's variables; an external harness with none ends where the recording does)."),
    rerun: bool = typer.Option(False, "--rerun", help="Re-run the whole episode on a fresh environment with nothing live: "
                               "an external harness (claude-code, --agent-cmd) is restarted with every model response "
                               "served from the recording, our own agents' tool calls are made again; the first "
                               "divergence is reported."),
    episode_dir: Path = typer.Option(None, "--episode-dir", help="With --fork-at or --rerun: where the new episode goes "
                                     "(default ./episodes/ENV-TIME/)."),
    breaks: list[str] = typer.Option(None, "--break", help="Playback stops at the turn where this happens (repeatable; "
                                     "--summary lists every hit). Same syntax as `run --break`: `tool shell`, "
                                     "`request POST /v1/* 4xx`, `verdict fail`, `finding 400-as-success`, `tokens>=5000`."),
) -> None:
    """Replay a recorded episode in the terminal UI, or print it (--headless, --summary).

    Exit code 0 when the episode passed, 1 when it failed or was not scored, 3 when the file cannot be read.

    Example: `stripebench replay replays/checkout-migration-400 --summary`;
    fork: `stripebench replay episodes/X/trace.jsonl --fork-at 3 --agent noop --headless` (instant from the
    episode's checkpoint of turn 3; `--reexecute` runs turns 1-3 again instead);
    an external harness: `stripebench replay episodes/X --fork-at 3 --agent claude-code --base-url URL --headless`;
    its whole episode offline: `stripebench replay episodes/X --rerun --headless`;
    where it stops: `stripebench replay replays/checkout-migration-400 --break 'tool replace_in_file' --summary`
    """
    breaks = parse_breaks(breaks)
    trace_path = sample_or_path(trace_path)
    if (trace_path / "batch.json").is_file():  # a batch directory (`stripebench batch`): its grid
        if headless or summary or fork_at is not None or rerun is True:
            raise UserError("a batch directory opens as a grid; for text use `stripebench batch report DIR`")
        from stripebench_tui.tui.apps.batch_app import run_batch_grid  # Textual loads only when the grid opens

        run_batch_grid(trace_path)
        return
    agent_cmd, agent_protocol, model, base_url = (v if isinstance(v, str) else None
                                                  for v in (agent_cmd, agent_protocol, model, base_url))
    where = {"episode_dir": episode_dir} if isinstance(episode_dir, Path) else {}
    if rerun is True:
        if fork_at is not None or agent_cmd or base_url:
            raise UserError("--rerun re-runs the recorded agent with nothing live; it takes no --fork-at, --agent-cmd or "
                            "--base-url")
        raise typer.Exit(run_rerun(trace_path, headless=headless, breakpoints=breaks, **where))
    if fork_at is not None:
        agent, extra = external_options(agent if isinstance(agent, str) else ("command" if agent_cmd else "human"),
                                        agent_cmd, agent_protocol)
        options = {**agent_options(agent, None, model, base_url, None), **extra}
        raise typer.Exit(run_fork(trace_path, fork_at, agent, headless=headless, options=options, breakpoints=breaks,
                                  reexecute=reexecute is True, **where))
    if reexecute is True:
        raise UserError("--reexecute applies to a fork: add --fork-at N")
    if agent_cmd or base_url:
        raise UserError("--agent-cmd and --base-url apply to a fork: add --fork-at N")
    # the trace reader (the findings) loads only when a replay runs: cli imports every command module at start-up
    from stripebench_tui.formats.open import open_episode

    trace = open_episode(trace_path)
    if not (headless or summary):
        from stripebench_tui.tui.apps.replay_app import run_replay  # Textual and the replay app: only for the TUI

        run_replay(trace, speed=speed, autoplay=play, breakpoints=breaks, present=present is True)
        return
    # the text writers (rich) load only for --headless or --summary
    from stripebench_tui.formats.text import episode_passed, summary_pass, write_headless, write_summary

    # Each reads the trace as a stream, one event at a time: a trace of millions of events is never held whole.
    if headless:
        from stripebench_tui.core.breakpoints import BreakpointSet  # the breakpoint parser: not at every start-up

        # Without --summary the hits are listed after the log, matched as it is printed (derived findings included).
        matcher = BreakpointSet.from_exprs(breaks) if breaks and not summary else None
        state = write_headless(trace, sys.stdout, matcher)
        if matcher is not None:
            hits = matcher.take_hits()
            sys.stdout.write("\nBreakpoint hits:" + "".join(f"\n  turn {h.turn}: {h.reason}" for h in hits)
                             + ("" if hits else " none") + "\n")
    if summary:
        if headless:
            sys.stdout.write("\n")
        # A trace recorded before the detectors gets them run over it now (`finding` breakpoints stop at theirs too).
        gathered = summary_pass(trace, breaks or ())
        state = gathered.summary
        write_summary(state, sys.stdout, gathered.derived, gathered.profile, gathered.hits)
    sys.stdout.flush()
    raise typer.Exit(EXIT_OK if episode_passed(state) else EXIT_EPISODE_FAILED)


def sample_or_path(path: Path) -> Path:
    """``path`` as given when it exists, else the sample replay of that name (``replays/NAME`` or ``NAME``).

    The samples are in the checkout's replays/, or bundled in the installed package.
    """
    if path.exists():
        return path
    # the manifests' module (pydantic) loads only when a sample's name is looked up; several commands' start-up
    # imports this one
    from stripebench_tui.envs.manifest import bundled_dir

    parts = path.parts
    if len(parts) == 1 or (len(parts) == 2 and parts[0] == "replays"):
        sample = bundled_dir("replays") / parts[-1]
        if sample.exists():
            return sample
    return path


def has_terminal() -> bool:
    """Whether stdin and stdout are both a terminal (the TUI needs both)."""
    return sys.stdin is not None and sys.stdin.isatty() and sys.stdout.isatty()


def run_rerun(trace_path: Path, *, headless: bool = False, episode_dir: Path | None = None,
              breakpoints: list[str] | None = None) -> int:
    """``replay TRACE --rerun``: the recorded agent again, nothing live (an external harness from its model recording)."""
    # The trace reader, the gateway's recording (httpx) and the model replay (the runtime) load only for --rerun
    from stripebench_tui.formats.open import open_episode
    from stripebench_tui.gateway.recording import EXCHANGES
    from stripebench_tui.harness.model_replay import MODEL_DIR

    trace = open_episode(trace_path)
    recorded = trace.header.extra.get("agent_options") if isinstance(trace.header.extra, dict) else None
    if (Path(trace.path).parent / MODEL_DIR / EXCHANGES).is_file():
        agent = trace.header.agent
        options = {k: v for k, v in (recorded or {}).items() if k in ("cmd", "protocol", "model")}
    else:  # our own agents: their recorded tool calls made again, then nothing more
        agent, options = "noop", {}
    return run_fork(trace, None, agent, headless=headless, options=options, episode_dir=episode_dir,
                    breakpoints=breakpoints)


def run_fork(trace_path: Trace | Path, at_turn: int | None, agent: str, *, headless: bool = False,
             options: dict[str, Any] | None = None, episode_dir: Path | None = None,
             breakpoints: list[str] | None = None, reexecute: bool = False) -> int:
    """``replay TRACE --fork-at N``: the live TUI on the fork, or with ``headless`` its text; the exit code.

    Headless works like ``run --headless``: stdin takes operator commands and, for the human
    agent, its turns (end of input ends the human's part). Without a terminal the TUI is refused
    (nobody could answer it) rather than left waiting until the wall-time limit.
    """
    from stripebench_tui.runtime.fork import fork_config  # the runtime (pydantic, httpx, Starlette, MCP): only for a fork

    if not headless and not has_terminal():
        raise UserError("--fork-at opens the TUI, which needs a terminal; add --headless to print the fork instead "
                        "(stdin then takes the operator's commands and the human agent's tool calls)")
    config = fork_config(trace_path, agent, headless=headless, agent_options=dict(options or {}), episode_dir=episode_dir,
                         breakpoints=list(breakpoints or []))
    if not headless:
        if reexecute:
            raise UserError("--reexecute is for --headless forks (the TUI's fork restores a checkpoint when it can)")
        from stripebench_tui.tui.apps.live_app import run_live  # Textual and the live app: only for the fork's TUI

        path = Path(trace_path.path) if isinstance(trace_path, Trace) else trace_path
        return run_live(config, fork=(path, at_turn))
    return asyncio.run(_headless_fork(trace_path, at_turn, config, reexecute))


async def _headless_fork(trace_path: Trace | Path, at_turn: int | None, config: EpisodeConfig,
                         reexecute: bool = False) -> int:
    from stripebench_tui.runtime.fork import fork_episode  # the runtime, as in run_fork

    def make(config: EpisodeConfig, subscribers: list[Handler]) -> Episode:
        return fork_episode(trace_path, at_turn, config, subscribers=subscribers, reexecute=reexecute)

    def after(episode: Episode, _result: EpisodeResult) -> None:
        if getattr(episode, "checkpoint", None) is not None:
            print(f"forked from the checkpoint of turn {at_turn} (nothing re-executed)", file=sys.stderr)
            return
        div = cast(Any, episode).fork.checker.divergence  # a forked episode (runtime.fork) carries its fork
        print(f"divergence: {div['text']}" if div else "divergence: none", file=sys.stderr)

    return await play_headless(config, make, after)


def register(app: typer.Typer) -> None:
    """Add ``replay`` to the CLI."""
    app.command("replay")(replay)


__all__ = ["has_terminal", "register", "replay", "run_fork", "sample_or_path"]
