"""``stripebench serve``: the TUI in a browser — a replay, a folder of episodes, or one live episode many can watch."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import typer

from stripebench_tui.commands.replay import sample_or_path
from stripebench_tui.core.events import EpisodeEnd
from stripebench_tui.core.trace import EPISODE_TRACE
from stripebench_tui.errors import BadFileError, UserError

PRESENT_FONT_SIZE = 22  # presenter mode in a browser: larger cells, for the back of the room


def serve(
    target: str = typer.Argument(..., metavar="TARGET", help="A trace or episode directory (replay), a folder of "
                                 "episodes (a list to pick from), or an environment id (a live episode, run once "
                                 "and shown to every viewer)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on. Anything but loopback makes every "
                             "page need the token printed at start."),
    port: int = typer.Option(8000, "--port", min=0, max=65535, help="Port to listen on (0: any free port)."),
    present: bool = typer.Option(False, "--present", help="Open in presenter mode (replays and live episodes): "
                                 "paced playback, large layout, captions, secrets and emails masked."),
    speed: float = typer.Option(1.0, "--speed", min=0.01, max=1000.0, help="Replay and presenter speed."),
    agent: str = typer.Option("oracle", "--agent", "-a", help="Live episode: the agent (as for `stripebench run`)."),
    approve: str = typer.Option("never", "--approve", help="Live episode: which tool calls wait for the operator "
                                "(never, always, or a tool glob)."),
    paused: bool = typer.Option(False, "--paused", help="Live episode: start paused (the operator resumes it)."),
    seed: int = typer.Option(0, "--seed", help="Live episode: the emulator seed."),
    episode_dir: Path = typer.Option(None, "--episode-dir", help="Live episode: where it is written "
                                     "(default ./episodes/ENV-TIME/)."),
) -> None:
    """Serve the TUI to a browser: every connection gets the same app, keys, mouse and resizing included.

    A live episode runs once, in the server; each viewer sees the same state, and only the page opened with the
    operator link (printed at start) may pause, step, inject, approve or stop it. Closing a tab never stops the
    episode; opening the link again shows where it is now. Ctrl+C stops the server (and a live episode with it).

    Examples: `stripebench serve replays/checkout-migration-400`;
    `stripebench serve episodes/ --port 8080`; `stripebench serve checkout-migration --paused`;
    `stripebench serve replays/checkout-migration-400 --present --host 0.0.0.0` (then open the printed URL).
    """
    # the server loads only when serving (it brings aiohttp and textual-serve in as it starts), not at every start-up
    from stripebench_tui.serve.server import EpisodeServer, serve_until_stopped

    what, live = _target(target, present, speed, agent, approve, paused, seed, episode_dir)
    server = EpisodeServer(what, host=host, port=port, live=live)
    try:
        asyncio.run(serve_until_stopped(server, announce=lambda line: print(line, flush=True)))
    except KeyboardInterrupt:
        pass


def _target(target: str, present: bool, speed: float, agent: str, approve: str, paused: bool, seed: int,
            episode_dir: Path | None):
    """What to serve, checked before the server starts (a bad trace or environment is one line, not a page)."""
    # The server's module and the picker (Textual) load only when serving: cli imports every command at start-up
    from stripebench_tui.serve.server import ServeTarget
    from stripebench_tui.tui.screens.picker import find_traces

    flags = (["--present"] if present else []) + ([f"--speed={speed}"] if speed != 1.0 else [])
    font_size = PRESENT_FONT_SIZE if present else 16  # the page's default; ?fontsize= in the URL overrides it
    path = sample_or_path(Path(target))
    if path.is_file() or (path.is_dir() and (path / EPISODE_TRACE).is_file()):
        from stripebench_tui.formats.open import open_episode  # the trace reader (the findings): only for a trace

        trace = open_episode(path)  # TraceError (exit 3) when it cannot be read
        title = f"stripebench · {trace.header.title or trace.header.env}"
        running = not isinstance(trace.last_event, EpisodeEnd) and Path(trace.path).suffix == ".jsonl"
        return ServeTarget("attach" if running else "replay", Path(trace.path).resolve(), title, flags,
                           font_size), None
    if path.is_dir() and not (path / "environment.toml").is_file():
        if not find_traces(path):
            raise UserError(f"{path}: no episodes here (no */trace.jsonl or *.jsonl); serve a trace, a folder of "
                            "episodes or an environment id")
        return ServeTarget("pick", path.resolve(), f"stripebench · {path.name}", flags, font_size), None
    if not path.exists() and ("/" in target or path.suffix in (".jsonl", ".json")):
        raise BadFileError(f"{target}: no such file or directory")
    live_target, host = _live_target(target, agent, approve, paused, seed, episode_dir)
    live_target.extra_args, live_target.font_size = flags, font_size  # every viewer's app opens presenter mode
    return live_target, host


def _live_target(env: str, agent: str, approve: str, paused: bool, seed: int, episode_dir: Path | None):
    # The runtime (pydantic, httpx, Starlette, MCP) loads only for a live episode
    from stripebench_tui.runtime.episode import Episode, EpisodeConfig
    from stripebench_tui.runtime.sandbox import TRACE_NAME, new_episode_dir
    from stripebench_tui.serve.server import LiveHost, ServeTarget

    config = EpisodeConfig(env=env, agent=agent, approval=approve, start_paused=paused, seed=seed, headless=True,
                           episode_dir=episode_dir if isinstance(episode_dir, Path) else None)
    episode = Episode(config)
    episode.prepare()  # unknown environment or agent: one line, before anything listens
    assert episode.env is not None
    # Fixed now, so every viewer's app is told where the trace will be before the episode writes it.
    config.episode_dir = new_episode_dir(episode.env.id, config.episode_dir, config.episodes_root)
    trace = config.episode_dir / TRACE_NAME
    print(f"episode: {config.episode_dir}", file=sys.stderr, flush=True)
    title = f"stripebench · {episode.env.manifest.title or episode.env.id} (live)"
    return ServeTarget("attach", trace, title), LiveHost(episode, trace)


def register(app: typer.Typer) -> None:
    """Add ``serve`` to the CLI."""
    app.command("serve")(serve)


__all__ = ["register", "serve"]
