"""Resuming an episode whose process died: ``stripebench resume EPISODE`` goes on from its last checkpoint.

``resumed_episode(trace, config)`` builds an ``Episode`` (not started) in the same episode directory that:

- cuts the trace where the last checkpoint was taken (every event of turns ≤ N stays, written once): the events
  recorded after it, of the turn the process died in, are moved to ``trace.jsonl.d/dropped-after-<N>.jsonl`` and
  that turn is played again; the turn index is cut the same way;
- restores the checkpoint's emulator state and workspace in place (``runtime.restore``) and its PostgreSQL
  database into a new cluster (the dead run's cluster directory is removed first), starts the services on
  them, and appends to the trace: its events are numbered after the recorded ones, first a ``resume`` event;
- hands the recorded events to the subscribers that rebuild state from them (live grading, findings) without
  writing them again, and the agent its history as a fork does (natively for the oracle and our LLM agents);
- counts the recorded agent turns against the turn limit.

The header is not rewritten: it is the episode's. ``replay``, ``diff``, ``report`` and ``export`` read the trace like
any other (the ``resume`` event marks where the new process took over).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from stripebench_tui.core import turns_sidecar
from stripebench_tui.core.bus import EventBus, Handler
from stripebench_tui.core.events import AGENT, EpisodeEnd, EpisodeResume, Event, Header, ModelMessage, ToolCall
from stripebench_tui.core.recorder import Recorder
from stripebench_tui.core.trace import Trace
from stripebench_tui.core.trace_writer import sidecar_dir
from stripebench_tui.envs.workspace import FULL_WORKSPACE
from stripebench_tui.errors import EXIT_RUNTIME, UserError, with_exit_code
from stripebench_tui.runtime import postgres
from stripebench_tui.runtime.checkpoints import CheckpointInfo, list_checkpoints
from stripebench_tui.runtime.episode import EpisodeConfig
from stripebench_tui.runtime.grade import EMULATOR_STATE
from stripebench_tui.runtime.restore import RestoredEpisode, Summarize
from stripebench_tui.runtime.sandbox import TRACE_NAME

DROPPED = "dropped-after-{turn}.jsonl"
STRING_OPTIONS = ("plan", "model", "base_url", "cmd", "protocol")  # recorded agent options a resume passes on


def resumable_checkpoint(trace: Trace) -> CheckpointInfo:
    """The checkpoint a resume starts from: the last one; UserError when the episode ended or has none."""
    path = Path(trace.path)
    if any(isinstance(ev, EpisodeEnd) for ev in trace.iter_events()):
        raise UserError(f"{path}: the episode ended (its trace has an episode_end event); nothing to resume — "
                        "fork it instead: `stripebench replay EPISODE --fork-at N`")
    infos = list_checkpoints(path)
    if not infos:
        raise with_exit_code(EXIT_RUNTIME, f"{path}: the episode kept no checkpoint (run with --checkpoint every, "
                                               "on the emulator in the local sandbox), so it cannot be resumed")
    return infos[-1]


def resume_config(trace: Trace, **overrides: Any) -> EpisodeConfig:
    """The recorded episode's configuration: its environment, agent (with its recorded plain options), seed,
    checkpoint policy and directory."""
    header = trace.header
    extra = header.extra if isinstance(header.extra, dict) else {}
    bench = extra.get("bench_folder")
    env = bench if bench and Path(bench).is_dir() else header.env
    if not env:
        raise UserError(f"{trace.path}: the trace does not say which environment it ran (header.env)")
    recorded = extra.get("agent_options")
    recorded = recorded if isinstance(recorded, dict) else {}
    options = {k: v for k, v in recorded.items() if k in STRING_OPTIONS and isinstance(v, str) and v}
    seed = header.seeds.get("emulator", 0) if isinstance(header.seeds, dict) else 0
    config = EpisodeConfig(env=env, agent=header.agent or "oracle", agent_options=options, seed=int(seed or 0),
                           episode_dir=Path(trace.path).parent, **overrides)
    if isinstance(extra.get("checkpoint"), str):
        config.checkpoint = extra["checkpoint"]
    if isinstance(extra.get("checkpoint_cap_mb"), int):
        config.checkpoint_cap_mb = extra["checkpoint_cap_mb"]
    return config


def cut_trace(trace_path: Path, info: CheckpointInfo) -> tuple[Path | None, int]:
    """Cut the trace at the checkpoint (the tail moved beside it) and its turn index; the tail's file and events."""
    size = trace_path.stat().st_size
    if size < info.trace_bytes:
        raise UserError(f"{trace_path}: shorter than when the checkpoint of turn {info.turn} was taken; not resuming")
    dropped: Path | None = None
    count = 0
    if size > info.trace_bytes:
        with open(trace_path, "rb") as fh:
            fh.seek(info.trace_bytes)
            tail = fh.read()
        count = tail.count(b"\n")
        dropped = sidecar_dir(trace_path) / DROPPED.format(turn=info.turn)
        n = 1
        while dropped.exists():
            n += 1
            dropped = dropped.with_name(DROPPED.format(turn=info.turn).replace(".jsonl", f"-{n}.jsonl"))
        dropped.write_bytes(tail)
        with open(trace_path, "r+b") as fh:
            fh.truncate(info.trace_bytes)
    index = sidecar_dir(trace_path) / "turns.idx"
    if index.is_file():
        quick = turns_sidecar.parse(index.read_bytes())
        keep = [] if quick is None else [(t, o) for t, o in zip(quick.turns, quick.starts, strict=False) if o < info.trace_bytes]
        index.write_bytes(turns_sidecar.header() + b"".join(turns_sidecar.record(t, o) for t, o in keep))
    return dropped, count


class ResumedEpisode(RestoredEpisode):
    """An episode going on in its own directory from its last checkpoint (see the module docstring)."""

    def __init__(self, config: EpisodeConfig, checkpoint: CheckpointInfo, trace: Trace, summarize: Summarize,
                 subscribers: list[Handler] | None = None) -> None:
        super().__init__(config, checkpoint, trace, summarize, subscribers)
        self.history: list[Event] = []
        self.dropped: Path | None = None
        self.dropped_events = 0

    def prepare(self) -> None:
        super().prepare()
        assert self.env is not None and self.fork is not None
        played = len({e.turn for e in self.fork.events
                      if (isinstance(e, ToolCall) and e.actor == AGENT) or (isinstance(e, ModelMessage)
                                                                            and e.role == "assistant")})
        limit = self.config.max_turns or self.env.manifest.limits.max_turns
        if limit:
            self.config.max_turns = max(1, limit - played)

    def _episode_dir(self) -> Path:
        episode_dir = Path(self.parent.path).parent
        trace_path = episode_dir / TRACE_NAME
        self.history = [ev for ev in self.parent.iter_events() if not isinstance(ev, Header)]
        self.dropped, self.dropped_events = cut_trace(trace_path, self.checkpoint)
        self.history = [ev for ev in self.history if ev.seq < self.checkpoint.next_seq]
        for later in list_checkpoints(trace_path):
            if later.turn > self.checkpoint.turn:
                shutil.rmtree(later.path)
        shutil.rmtree(episode_dir / "workspace", ignore_errors=True)
        shutil.rmtree(episode_dir / FULL_WORKSPACE, ignore_errors=True)  # laid out again with the workspace
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(str(episode_dir / EMULATOR_STATE) + suffix).unlink(missing_ok=True)
        # the dead process's PostgreSQL cluster (its server died with it): the checkpoint's dump makes a new one
        shutil.rmtree(episode_dir / postgres.DATA_DIR, ignore_errors=True)
        (episode_dir / postgres.RESTORE_FILE).unlink(missing_ok=True)
        return episode_dir

    def _prepared(self) -> None:
        super()._prepared()  # the checkpoint's workspace, in place (same directory: no path to change)

    def _new_bus(self) -> EventBus:
        return EventBus(first_seq=self.checkpoint.next_seq)

    def _recorder(self, path: Path, header: Header, secrets: list[str]) -> Recorder:
        return Recorder.create(path, header, secrets=secrets, resume_at=(self.checkpoint.next_seq, self.at_turn))

    def _open_trace(self, episode_dir: Path) -> None:
        super()._open_trace(episode_dir)
        assert self.bus is not None
        self.bus.turn = self.at_turn  # the new process's setup is recorded at the end of turn N

    async def _before_agent(self, bus: EventBus) -> None:
        assert self.recorder is not None
        bus.redeliver(self.history, skip=self.recorder.subscription)
        await bus.drain()
        await bus.publish(EpisodeResume(from_turn=self.at_turn, dropped=self.dropped.name if self.dropped else "",
                                        dropped_events=self.dropped_events))
        bus.turn = max(bus.turn, self.at_turn)
        await self._reopen_browser(bus, self.history)


def resumed_episode(trace: Trace, config: EpisodeConfig, summarize: Summarize,
                    subscribers: list[Handler] | None = None) -> ResumedEpisode:
    """A prepared ``ResumedEpisode`` of the open ``trace`` (UserError when it ended or kept no checkpoint)."""
    info = resumable_checkpoint(trace)
    episode = ResumedEpisode(config, info, trace, summarize, subscribers)
    episode.prepare()
    return episode


__all__ = ["ResumedEpisode", "cut_trace", "resumable_checkpoint", "resume_config", "resumed_episode"]
