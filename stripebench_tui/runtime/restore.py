"""Instant forks: a new episode that starts from a recorded episode's checkpoint instead of re-executing its turns.

``restored_episode(trace, checkpoint, config, summarize)`` builds an ``Episode`` (not started) that:

- makes its emulator's state file from the checkpoint and serves it on the recorded emulator's port when that port
  is free (object URLs the app stored keep working), and gives the services their recorded ports likewise;
- lays its workspace out from the checkpoint (the recorded episode's absolute paths in small text files become
  the new episode's), puts the checkpoint's PostgreSQL dump where the episode's new cluster loads it before it
  listens (``runtime.pg_checkpoint``; an environment with ``[postgres]``), installs the environment's
  dependencies as usual (from the caches), runs no setup command and no seed (the restored world already has
  what they made), and starts the services on the restored state;
- publishes the recorded events of turns 1..N into its own trace (so the trace, the findings and the live grading
  see the episode whole) and numbers its own turns from N+1;
- opens the page the agent last navigated to in a fresh browser (a browser is not part of a checkpoint: what
  was typed into the page since is lost);
- hands the continuing agent its history: natively when the agent can take it (``continue_from(events, turn)``:
  the oracle skips the plan steps already played, our LLM agents rebuild their message list), else as a summary
  observation (``summarize(events, turn)``).

The header records ``extra.forked_from = {"trace", "turn", "mode": "restore"}``. No turn is re-executed, so there is
no divergence to report (``fork.checker.divergence`` stays None).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from stripebench_tui.core.agent import Agent, AgentTurn, Observation, Task
from stripebench_tui.core.bus import EventBus, Handler
from stripebench_tui.core.episode_files import Refused, episode_file
from stripebench_tui.core.events import AGENT, EpisodeEnd, Event, Header, Service, ToolCall, ToolResult
from stripebench_tui.core.trace import Trace
from stripebench_tui.errors import UserError
from stripebench_tui.formats.lineage import record_child
from stripebench_tui.runtime.checkpoints import CheckpointInfo, restore_emulator, restore_workspace
from stripebench_tui.runtime.episode import Episode, EpisodeConfig
from stripebench_tui.runtime.grade import EMULATOR_STATE
from stripebench_tui.runtime.pg_checkpoint import stage_restore
from stripebench_tui.runtime.sandbox import TRACE_NAME
from stripebench_tui.runtime.services import port_is_free
from stripebench_tui.stripe_account.backend import StripeBackend, start_backend

RESTORE = "restore"
CHECKPOINT_SERVICE = "checkpoint"  # the service name of the checkpoint notes in a trace
BROWSER_NAVIGATE = "browser_navigate"
Summarize = Callable[[list[Event], int], str]


def prefix_events(trace: Trace, at_turn: int) -> list[Event]:
    """The recorded events of turns 1..``at_turn`` of an open trace, without its end (what a restore republishes)."""
    out: list[Event] = []
    for ev in trace.iter_events():
        if ev.turn > at_turn:
            break
        if ev.turn < 1 or isinstance(ev, (Header, EpisodeEnd)):
            continue
        if isinstance(ev, Service) and ev.service == CHECKPOINT_SERVICE:
            continue  # the recorded episode's own checkpoints are not this one's
        out.append(ev)
    return out


@dataclass
class NoDivergence:
    """A restored fork's checker: nothing is re-executed, so nothing can diverge (``divergence`` stays None)."""

    bus: Any = None
    divergence: dict[str, Any] | None = None


class ContinuingAgent:
    """The chosen agent, told its history once it starts: natively (``continue_from``) or as a summary."""

    def __init__(self, inner: Agent, events: list[Event], at_turn: int, summarize: Summarize) -> None:
        self.inner = inner
        self.name = getattr(inner, "name", "agent")
        self.model = getattr(inner, "model", "")
        self.events = events
        self.at_turn = at_turn
        self.summarize = summarize
        self.checker = NoDivergence()
        self.native = callable(getattr(inner, "continue_from", None))
        self.hint = ""  # an operator message for the first turn after the fork (bisect --hint)
        self._summary: str | None = None

    def __getattr__(self, name: str) -> Any:  # the human agent's submit/say/finish, etc.
        return getattr(self.inner, name)

    async def start(self, task: Task) -> None:
        """Start the agent, then give it turns 1..N."""
        await self.inner.start(task)
        if self.native:
            self.inner.continue_from(self.events, self.at_turn)  # type: ignore[attr-defined]
        else:
            self._summary = self.summarize(self.events, self.at_turn)

    async def next_turn(self, observations: list[Observation]) -> AgentTurn:
        """The agent's turn (its first, without native history, sees the summary first)."""
        if self._summary is not None:
            observations = [Observation(kind="operator_message", text=self._summary), *observations]
            self._summary = None
        if self.hint:
            observations = [*observations, Observation(kind="operator_message", text=self.hint)]
            self.hint = ""
        return await self.inner.next_turn(observations)

    async def close(self) -> None:
        await self.inner.close()


class RestoredEpisode(Episode):
    """An Episode that starts from a checkpoint (see the module docstring)."""

    def __init__(self, config: EpisodeConfig, checkpoint: CheckpointInfo, parent: Trace, summarize: Summarize,
                 subscribers: list[Handler] | None = None) -> None:
        super().__init__(config, subscribers)
        self.checkpoint = checkpoint
        self.parent = parent  # the recorded episode's open trace
        self.summarize = summarize
        self.at_turn = checkpoint.turn
        self.forked_from = {"trace": str(Path(parent.path).resolve()), "turn": checkpoint.turn, "mode": RESTORE}
        self.fork: ContinuingAgent | None = None
        self.restored_files = 0
        self.restored_database = 0  # bytes of the PostgreSQL dump handed to the cluster (0: none)

    def prepare(self) -> None:
        super().prepare()
        assert self.env is not None
        if self.env.manifest.postgres is not None and "postgres" not in self.checkpoint.databases:
            raise UserError(f"the checkpoint of turn {self.at_turn} holds no PostgreSQL database: "
                            "fork with --reexecute instead")
        self.fork = ContinuingAgent(self.agent, prefix_events(self.parent, self.at_turn), self.at_turn, self.summarize)
        self.agent = self.fork

    def _start_backend(self, episode_dir: Path) -> StripeBackend:
        cfg, env = self.config, self.env
        assert env is not None
        restore_emulator(self.checkpoint, episode_dir / EMULATOR_STATE)
        port = _port_of(self.checkpoint.variables.get("STRIPE_API_BASE", ""))
        return start_backend(cfg.backend, seed=cfg.seed, api_version=env.manifest.stripe.api_version,
                             stripe_key=cfg.stripe_key, state=episode_dir / EMULATOR_STATE,
                             port=port if port and port_is_free(port) else 0)

    def _preset_variables(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for name, value in self.checkpoint.variables.items():
            if name.endswith("_PORT") and value.isdigit() and port_is_free(int(value)):
                out[name] = value
                out.setdefault(name[: -len("_PORT")] + "_URL", f"http://127.0.0.1:{value}")
        return out

    def _prepared(self) -> None:
        sandbox = self.sandbox
        assert sandbox is not None
        shutil.rmtree(sandbox.workspace)
        old = self.checkpoint.variables.get("EPISODE_DIR", "")
        remap = [(old.rstrip("/") + "/", str(sandbox.episode_dir).rstrip("/") + "/")] if old else []
        self.restored_files = restore_workspace(self.checkpoint, sandbox.workspace, remap)
        if self.env is not None and self.env.manifest.postgres is not None:
            self.restored_database = stage_restore(self.checkpoint.path, self.at_turn, sandbox.episode_dir)

    def _open_trace(self, episode_dir: Path) -> None:
        sandbox, forked = self.sandbox, self.forked_from
        previous = getattr(sandbox, "header_extra", None)
        sandbox.header_extra = lambda: {**(previous() if previous else {}), "forked_from": forked}
        super()._open_trace(episode_dir)
        record_child(Path(self.parent.path), episode_dir / TRACE_NAME, self.at_turn, RESTORE)  # (a resume: skipped)

    async def _make_world(self, bus: EventBus) -> None:
        ports = {k: v for k, v in self.checkpoint.variables.items() if k.endswith("_PORT")}
        moved = [k for k, v in ports.items() if self.sandbox is not None and self.sandbox.variables().get(k) != v]
        await bus.publish(Service(service=CHECKPOINT_SERVICE, status="log", text=(
            f"restored turn {self.at_turn} of {self.forked_from['trace']}: the emulator's state"
            + (f", the PostgreSQL database ({self.restored_database} bytes dumped)" if self.restored_database else "")
            + f" and {self.restored_files} workspace files; no setup, no seed"
            + (f"; {', '.join(moved)} taken, given new ports" if moved else ""))))

    async def _before_agent(self, bus: EventBus) -> None:
        assert self.fork is not None and self.sandbox is not None
        for ev in self.fork.events:
            if isinstance(ev, ToolResult):
                self._bring_files(ev, self.sandbox.episode_dir)
            await bus.publish(ev, turn=ev.turn)
        bus.turn = max(bus.turn, self.at_turn)
        await self._reopen_browser(bus, self.fork.events)

    def _bring_files(self, ev: ToolResult, episode_dir: Path) -> None:
        """Copy the files a recorded result names (its whole output, its screenshots) from the recorded episode,
        under names of their own (``parent-…``: the new episode numbers its own files from 1 again)."""
        parent_dir = Path(self.parent.path).parent
        names = [ev.sidecar] if ev.sidecar else []
        names += list(ev.images)
        moved: dict[str, str] = {}
        for name in names:
            try:
                source = episode_file(parent_dir, name)
            except (Refused, OSError):
                continue  # a name leaving the recorded episode, or a file gone: the event keeps its name
            rel = Path(name)
            new = rel.with_name(f"parent-{rel.name}")
            target = episode_dir / new
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            moved[name] = new.as_posix()
        if ev.sidecar in moved:
            ev.sidecar = moved[ev.sidecar]
        ev.images = [moved.get(i, i) for i in ev.images]

    async def _reopen_browser(self, bus: EventBus, events: list[Event]) -> None:
        """The browser is a process, not part of a checkpoint: open the page the agent last navigated to again
        (the page as first loaded; what was typed into it since is gone), and say so."""
        url = next((str(ev.arguments.get("url", "")) for ev in reversed(events) if isinstance(ev, ToolCall)
                    and ev.actor == AGENT and ev.tool == BROWSER_NAVIGATE), "")
        if not url or self.executor is None or self.sandbox is None:
            return
        now = self.sandbox.variables()
        for name, old in self.checkpoint.variables.items():  # a port that had to move
            if name.endswith("_PORT") and now.get(name, old) != old:
                url = url.replace(f":{old}", f":{now[name]}")
        outcome = await self.executor.call(BROWSER_NAVIGATE, {"url": url})
        await bus.publish(Service(service=CHECKPOINT_SERVICE, status="log", stream="stderr" if outcome.is_error else "",
                                  text=f"the browser is not in a checkpoint: reopened {url}"
                                       + (f" (failed: {outcome.text[:200]})" if outcome.is_error else "")))


def _port_of(url: str) -> int:
    try:
        return urlsplit(url).port or 0
    except ValueError:
        return 0


def restored_episode(trace: Trace, checkpoint: CheckpointInfo, config: EpisodeConfig, summarize: Summarize,
                     subscribers: list[Handler] | None = None) -> RestoredEpisode:
    """A prepared ``RestoredEpisode`` of the open ``trace`` at ``checkpoint`` (see the module docstring)."""
    episode = RestoredEpisode(config, checkpoint, trace, summarize, subscribers)
    episode.prepare()
    return episode


__all__ = ["ContinuingAgent", "CHECKPOINT_SERVICE", "NoDivergence", "RESTORE", "RestoredEpisode",
           "prefix_events", "restored_episode"]
