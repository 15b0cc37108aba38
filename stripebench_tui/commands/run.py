"""``stripebench run ENV``: play a live episode of an environment (the TUI, or text with --headless)."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from stripebench_tui.core.bus import Handler
from stripebench_tui.errors import UserError

if TYPE_CHECKING:  # the command loads the runtime only when it runs an episode
    from stripebench_tui.core.driver import Driver
    from stripebench_tui.runtime.episode import Episode, EpisodeConfig

LLM_AGENTS = ("anthropic", "openai")
EXTERNAL_AGENTS = ("claude-code", "codex", "mini-swe-agent", "command")  # harnesses run as processes behind the model gateway


def agent_options(agent: str, plan: str | None, model: str | None, base_url: str | None,
                  trace: Path | None) -> dict[str, Any]:
    """The options the chosen agent takes, from the flags; UserError for a flag that does not apply."""
    options: dict[str, Any] = {}
    if plan is not None:
        if agent != "oracle":
            raise UserError("--plan only applies to the oracle agent (--agent oracle)")
        options["plan"] = plan
    if trace is not None:
        if agent != "replay":
            raise UserError("--trace only applies to the replay agent (--agent replay)")
        options["trace"] = str(trace)
    for flag, value, key in (("--model", model, "model"), ("--base-url", base_url, "base_url")):
        if value is not None:
            if agent not in LLM_AGENTS + EXTERNAL_AGENTS:
                raise UserError(f"{flag} only applies to the LLM agents and external harnesses "
                                f"({', '.join(LLM_AGENTS + EXTERNAL_AGENTS)})")
            options[key] = value
    return options


BREAK_HELP = ("Pause before the next model call when this happens (repeatable): `tool shell command=*curl*`, "
              "`request POST /v1/refunds* 4xx`, `verdict fail [CRITERION]`, `verdict any`, `finding 400-as-success`, "
              "`turns>=10`, `tokens>=50000`, `cost>=0.50`, `time>=300`. Globs use * and ?; "
              "headless, type resume or step to go on (once stdin has ended, hits are recorded and the episode runs on).")


def parse_breaks(exprs: list[str] | None) -> list[str]:
    """The ``--break`` expressions, checked now so a typo is one line before anything starts."""
    # The breakpoint parser and the detectors (the findings) load only when a command parses --break: cli imports
    # every command module at start-up
    from stripebench_tui.core.breakpoints import BreakpointError, parse
    from stripebench_tui.findings.runner import DETECTORS

    out = [e for e in (exprs if isinstance(exprs, list) else []) if isinstance(e, str)]
    for expr in out:
        try:
            parse(expr, detectors=DETECTORS)
        except BreakpointError as exc:
            raise UserError(f"--break: {exc}") from None
    return out


def external_options(agent: str, agent_cmd: str | None, protocol: str | None) -> tuple[str, dict[str, Any]]:
    """``--agent-cmd`` picks the generic ``command`` agent; returns the agent name and its extra options."""
    if agent_cmd is None:
        if protocol is not None:
            raise UserError("--agent-protocol only applies with --agent-cmd")
        return agent, {}
    if agent not in ("oracle", "command"):  # oracle is the default: --agent-cmd alone is enough
        raise UserError(f"--agent-cmd runs its own harness; it cannot be combined with --agent {agent}")
    return "command", {"cmd": agent_cmd, **({"protocol": protocol} if protocol else {})}


def run(
    env: str = typer.Argument(..., metavar="ENV", help="Environment id (see `stripebench envs`) or a path to one."),
    agent: str = typer.Option("oracle", "--agent", "-a",
                              help="oracle, noop, human, anthropic, openai, replay, or an external harness: claude-code "
                                   "(`stripebench agents list`)."),
    agent_cmd: str = typer.Option(None, "--agent-cmd",
                                  help='Run any agent harness behind the model gateway: a command line with {problem}, '
                                       '{workspace}, {base_url}, {openai_base_url}, {api_key} and {model} placeholders.'),
    agent_protocol: str = typer.Option(None, "--agent-protocol",
                                       help="--agent-cmd: the API it speaks, anthropic (default) or openai."),
    plan: str = typer.Option(None, "--plan", help="Oracle only: play this mutant instead of the solution."),
    model: str = typer.Option(None, "--model", help="LLM agents: the model name."),
    base_url: str = typer.Option(None, "--base-url", help="LLM agents: the provider's base URL (any OpenAI-compatible server)."),
    trace: Path = typer.Option(None, "--trace", help="Replay agent: the trace whose tool calls to make again."),
    seed: int = typer.Option(0, "--seed", help="Emulator seed (same seed, same object ids)."),
    backend: str = typer.Option("emulator", "--backend",
                                help="emulator (offline) or stripe (your test mode, STRIPE_SECRET_KEY)."),
    stripe_key: str = typer.Option(None, "--stripe-key",
                                   help="Your sk_test_ key for --backend stripe (default $STRIPE_SECRET_KEY)."),
    episode_dir: Path = typer.Option(None, "--episode-dir", help="Where the episode goes (default ./episodes/ENV-TIME/)."),
    max_turns: int = typer.Option(None, "--max-turns", min=1,
                                  help="Stop after this many agent turns (default: the environment's)."),
    approve: str = typer.Option("never", "--approve",
                                help="Which tool calls wait for your approval: never, always, or globs like 'shell,browser_*' "
                                "(an external harness's calls, e.g. 'Bash', are held at the gateway)."),
    paused: bool = typer.Option(False, "--paused", help="Start paused (TUI: step with the controls)."),
    headless: bool = typer.Option(False, "--headless", help="Print the episode as it happens instead of opening the TUI."),
    present: bool = typer.Option(False, "--present", help="TUI: open in presenter mode, the live stream paced for an "
                                 "audience (large layout, captions, secrets and emails masked); P toggles it."),
    breaks: list[str] = typer.Option(None, "--break", help=BREAK_HELP),
    sandbox: str = typer.Option(None, "--sandbox", envvar="STRIPEBENCH_SANDBOX",
                                help="Where the episode runs: local (this machine as you, the default: confines nothing) "
                                     "or docker (a container that sees only the workspace; see `stripebench doctor`). "
                                     "Default from $STRIPEBENCH_SANDBOX."),
    checkpoint: str = typer.Option("every", "--checkpoint", help="Keep the world's state (emulator, workspace, the "
                                   "app's SQLite databases) beside the trace at turn ends, for instant forks and "
                                   "resume: every (each turn), every:K (each K-th turn) or off."),
    checkpoint_cap: int = typer.Option(2048, "--checkpoint-cap", min=1, help="Megabytes the checkpoints may use; "
                                       "the oldest are pruned first, never the newest."),
) -> None:
    """Run a live episode: start the environment, let the agent work, grade it.

    With --headless every event is printed as it happens; the exit code is 0 when the
    episode passed, 1 when it failed, 3 for a bad input file and 4 when the environment
    could not be set up. Headless, stdin takes operator commands (approve, reject WHY,
    edit {"command": "ls"}, pause, resume, step, inject TEXT, stop) and, for the human agent, tool calls
    (`shell {"command": "ls"}`, `say TEXT`, `done`).

    Example: `stripebench run checkout-migration --headless --agent oracle --plan 400-called-success`;
    add `--sandbox docker` to run it in a container (`stripebench doctor` checks the engine);
    pause where it goes wrong: `--break 'request 4xx' --break 'verdict fail'` (then resume, or step).
    """
    # the runtime (pydantic, httpx, Starlette, MCP) loads only when an episode runs, not at every start-up
    from stripebench_tui.runtime.episode import EpisodeConfig

    agent, extra = external_options(agent, agent_cmd if isinstance(agent_cmd, str) else None,
                                    agent_protocol if isinstance(agent_protocol, str) else None)
    config = EpisodeConfig(env=env, agent=agent, agent_options={**agent_options(agent, plan, model, base_url, trace), **extra},
                           backend=backend, stripe_key=stripe_key, seed=seed, episode_dir=episode_dir,
                           max_turns=max_turns, approval=approve, start_paused=paused, headless=headless,
                           breakpoints=parse_breaks(breaks))
    if isinstance(checkpoint, str):  # (called as a function, the defaults are typer's OptionInfo)
        from stripebench_tui.runtime.checkpoints import Policy

        Policy.parse(checkpoint)  # a bad value is one line before anything starts
        config.checkpoint = checkpoint
    if isinstance(checkpoint_cap, int):
        config.checkpoint_cap_mb = checkpoint_cap
    if isinstance(sandbox, str) and sandbox:  # (called as a function, the default is typer's OptionInfo)
        config.sandbox = sandbox
    if not headless:
        try:
            from stripebench_tui.tui.apps.live_app import run_live  # Textual and the live app: only for the TUI
        except ImportError:
            raise UserError("the live TUI is not built yet; run with --headless to print the episode instead") from None
        raise typer.Exit(run_live(config, present=present is True))
    code = asyncio.run(play_headless(config))
    raise typer.Exit(code)


def _new_episode(config: EpisodeConfig, subscribers: list[Handler]) -> Episode:
    from stripebench_tui.runtime.episode import Episode  # the runtime: only when an episode runs (see run)

    episode = Episode(config, subscribers=subscribers)
    episode.prepare()  # unknown env/agent, missing key: one line before anything starts
    return episode


async def play_headless(config: EpisodeConfig,
                        make_episode: Callable[[EpisodeConfig, list[Handler]], Episode] = _new_episode,
                   after: Callable[[Any, Any], None] | None = None) -> int:
    """Play an episode printed as text, taking operator commands (and the human agent's turns) from stdin.

    ``make_episode(config, subscribers)`` builds the prepared episode (``replay --fork-at`` passes a fork);
    ``after(episode, result)`` may print more once it ended. Returns the exit code.
    """
    # The runtime and the printer (rich, the findings) load only when an episode is played
    from stripebench_tui.runtime.episode import exit_code_for
    from stripebench_tui.runtime.printer import LivePrinter

    printer = LivePrinter(sys.stdout)
    episode = make_episode(config, [printer])
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    interrupts = 0

    def interrupted() -> None:
        nonlocal interrupts
        interrupts += 1
        if interrupts == 1:
            print("stripebench: stopping the episode (Ctrl+C again to abandon it)", file=sys.stderr)
            episode.stop("interrupted")
        elif main is not None:
            main.cancel()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, interrupted)
    if config.agent == "human" or str(config.approval) != "never" or config.breakpoints:
        _read_stdin(loop, episode)
    try:
        result = await episode.run()
    except asyncio.CancelledError:  # a second Ctrl+C: the episode's cleanup already ran
        print("stripebench: interrupted", file=sys.stderr)
        return 130
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
    if result.trace_path is not None:
        print(f"trace: {result.trace_path}", file=sys.stderr)
    if result.setup_failed:
        print(f"stripebench: {result.error}", file=sys.stderr)
    if after is not None:
        after(episode, result)
    return exit_code_for(result)


OPERATOR_WORDS = {
    "approve": "approve", "a": "approve", "reject": "reject", "r": "reject", "stop": "stop", "pause": "pause",
    "resume": "resume", "step": "step", "inject": "inject", "edit": "edit", "e": "edit",
}


def operator_line(driver: Driver | None, line: str) -> bool:
    """Apply a headless operator command (approve, reject [why], edit JSON, stop, pause, resume, step, inject TEXT);
    False if none."""
    word, _, rest = line.strip().partition(" ")
    action = OPERATOR_WORDS.get(word)
    if action is None or driver is None:
        return False
    if action == "reject":
        driver.reject(rest.strip())
    elif action == "edit":
        try:
            arguments = json.loads(rest)
        except ValueError:
            arguments = None
        if not isinstance(arguments, dict):
            print('stripebench: edit takes the new arguments as a JSON object: edit {"command": "ls"}', file=sys.stderr)
        else:
            driver.edit(arguments)
    elif action == "inject":
        driver.inject(rest.strip())
    elif action == "stop":
        driver.stop(rest.strip() or "stopped by the operator")
    else:
        getattr(driver, action)()
    return True


def _read_stdin(loop: asyncio.AbstractEventLoop, episode: Episode) -> None:
    """Read stdin lines on a daemon thread: operator commands, else the human agent's turns."""
    human = episode.config.agent == "human"

    def feed(line: str) -> None:
        if operator_line(episode.driver, line):
            return
        if not human:
            if line.strip():
                print(f"stripebench: unknown command {line.strip()!r} (approve, reject, edit JSON, pause, resume, step, inject "
                      f"TEXT, stop)",
                      file=sys.stderr)
            return
        try:
            episode.agent.parse_line(line)
        except UserError as exc:
            print(f"stripebench: {exc}", file=sys.stderr)

    def reader() -> None:
        try:
            for line in sys.stdin:
                loop.call_soon_threadsafe(feed, line)
        except (OSError, ValueError):
            return
        if human:  # no more input: the human is done
            loop.call_soon_threadsafe(feed, "done end of input")
        elif episode.config.breakpoints:  # nobody can resume a hit any more: record hits and run on
            loop.call_soon_threadsafe(_run_on_at_hits, episode)

    threading.Thread(target=reader, name="stdin", daemon=True).start()


def _run_on_at_hits(episode: Episode) -> None:
    """End of input: the breakpoints stay (installed and recorded), their hits are recorded, nothing pauses."""
    episode.config.pause_at_breakpoints = False  # not started yet (stdin was empty): it starts that way
    driver = episode.driver
    if driver is not None:
        driver.pause_at_hits = False
        driver.resume()  # a hit (or a pause typed before the end) may hold it now; nobody else can resume it
    print("stripebench: end of input: breakpoint hits are recorded and the episode runs on without pausing",
          file=sys.stderr)


def register(app: typer.Typer) -> None:
    """Add ``run`` to the CLI."""
    app.command("run")(run)


__all__ = ["BREAK_HELP", "parse_breaks", "agent_options", "operator_line", "play_headless", "register", "run"]
