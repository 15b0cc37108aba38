"""Re-execute a recorded episode up to a turn on a fresh environment, flag the first divergence, then fork.

``fork_episode(trace, at_turn=N, agent="noop")`` builds an ``Episode`` whose agent
first makes the recorded agent tool calls of turns 1..N again (the replay agent,
with the recorded ports and paths mapped onto the new ones) and then hands over to
the chosen agent. The same emulator seed gives the same object ids, so each
re-executed result is compared with the recorded one: its error status, the Stripe
ids in its output, its text (after mapping the recorded variables), and the Stripe
objects that appeared during the turn. The first difference is published as an
``operator`` event with ``action="divergence"`` (details say what differed); later
ones are not repeated. The new trace's header has ``extra.forked_from``.

On this re-executing path (no checkpoint of the turn, ``--reexecute``, an external harness) the continuing agent's
first observation is a summary of the replayed turns: what was called and what came back. A fork that restores a
checkpoint (``runtime.restore``) hands an agent that can take it (``continue_from``) its recorded conversation
natively instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stripebench_tui.agents.replay_agent import ReplayAgent
from stripebench_tui.core.agent import Agent, AgentTurn, Observation, Task
from stripebench_tui.core.bus import Handler
from stripebench_tui.core.events import AGENT, Event, ModelMessage, Operator, StripeObject, ToolCall, ToolResult
from stripebench_tui.core.trace import Trace
from stripebench_tui.errors import UserError
from stripebench_tui.formats.lineage import record_child
from stripebench_tui.formats.open import opened
from stripebench_tui.runtime.checkpoints import checkpoint_at
from stripebench_tui.runtime.episode import Episode, EpisodeConfig
from stripebench_tui.runtime.restore import RestoredEpisode, restored_episode
from stripebench_tui.runtime.sandbox import TRACE_NAME

DIVERGENCE = "divergence"
SUMMARY_OUTPUT_CHARS = 600  # per replayed tool result, in the summary the continuing agent gets
_STRIPE_ID = re.compile(r"\b(?:acct|bt|ch|cus|cs|evt|in|ii|pi|pm|price|prod|re|seti|si|sub|txn|we|promo|shr|src|tok|card|"
                        r"req|il|cbtxn|coupon)_[A-Za-z0-9]{6,}\b")


# Timings in tool output ("[exit 0 · 0.21 s]") differ on every run; they are not a divergence.
_TIMING = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s)\b")


def comparable(text: str) -> str:
    """Tool output with timings masked and surrounding space dropped, for comparing runs."""
    return _TIMING.sub("#s", text or "").strip()


def stripe_ids(text: str) -> list[str]:
    """Stripe object ids mentioned in ``text``, in order of first mention."""
    return list(dict.fromkeys(_STRIPE_ID.findall(text or "")))


@dataclass
class RecordedTurn:
    """One recorded agent turn with tool calls: its calls, their results and the objects it created or changed."""

    turn: int
    calls: list[ToolCall] = field(default_factory=list)
    results: dict[str, ToolResult] = field(default_factory=dict)
    object_ids: list[str] = field(default_factory=list)
    text: str = ""


def recorded_turns(trace: Trace | Path, up_to: int) -> tuple[list[RecordedTurn], list[Event]]:
    """Recorded agent turns (with tool calls) up to turn ``up_to`` of ``trace`` (open, or its path), and every event
    up to it."""
    trace = opened(trace)
    turns: dict[int, RecordedTurn] = {}
    events: list[Event] = []
    for ev in trace.iter_events():
        if ev.turn > up_to:
            break
        events.append(ev)
        if ev.turn == 0:
            continue
        rt = turns.setdefault(ev.turn, RecordedTurn(turn=ev.turn))
        if isinstance(ev, ToolCall) and ev.actor == AGENT:
            rt.calls.append(ev)
        elif isinstance(ev, ToolResult):
            rt.results[ev.call_id] = ev
        elif isinstance(ev, StripeObject) and ev.object_id not in rt.object_ids:
            rt.object_ids.append(ev.object_id)
        elif isinstance(ev, ModelMessage) and ev.role == "assistant" and ev.text:
            rt.text = ev.text
    return [turns[t] for t in sorted(turns) if turns[t].calls], events


def summary_of(events: list[Event], at_turn: int) -> str:
    """What the continuing agent is told about the replayed part of the episode."""
    lines = [f"This episode was forked from a recorded one at the end of turn {at_turn}: the environment is as it "
             f"was then, and what turns 1-{at_turn} did is below. Continue the task from here."]
    for ev in events:
        if ev.turn == 0:
            continue
        if isinstance(ev, ModelMessage) and ev.text:
            lines.append(f"[turn {ev.turn}] {ev.role}: {ev.text}")
        elif isinstance(ev, ToolCall):
            lines.append(f"[turn {ev.turn}] call {ev.tool} {ev.arguments}")
        elif isinstance(ev, ToolResult):
            out = ev.output if len(ev.output) <= SUMMARY_OUTPUT_CHARS else ev.output[:SUMMARY_OUTPUT_CHARS] + " …"
            lines.append(f"[turn {ev.turn}] result{' (error)' if ev.is_error else ''}: {out}")
    return "\n".join(lines)


class ForkAgent:
    """Replays the recorded turns, then lets ``inner`` (any agent) continue; also watches for divergence."""

    def __init__(self, inner: Agent, trace: Trace | Path, at_turn: int) -> None:
        self.inner = inner
        self.name = getattr(inner, "name", "agent")
        self.model = getattr(inner, "model", "")
        recorded = opened(trace)
        self.trace_path = Path(recorded.path)
        self.at_turn = at_turn
        self.turns, self.events = recorded_turns(recorded, at_turn)
        self.replay = ReplayAgent(trace=recorded)
        self.replay.turns = self.replay.turns[: len(self.turns)]
        self.checker = DivergenceChecker(self.turns)
        self._replayed = 0
        self._handed_over = False
        self.task: Task | None = None

    @property
    def handed_over(self) -> bool:
        """Whether the recorded turns are all replayed and the chosen agent has taken over."""
        return self._handed_over

    def __getattr__(self, name: str) -> Any:  # the human agent's submit/say/finish, etc.
        return getattr(self.inner, name)

    async def start(self, task: Task) -> None:
        """Learn the new episode's variables (for the replayed calls); the inner agent starts at hand-over."""
        self.task = task
        await self.replay.start(task)
        self.checker.mapping = list(self.replay.mapping)

    async def next_turn(self, observations: list[Observation]) -> AgentTurn:
        """A recorded turn while any remain, then the inner agent's turns (its first sees a summary)."""
        if self._replayed < len(self.replay.turns):
            self._replayed += 1
            turn = await self.replay.next_turn(observations)
            self.checker.expect(self._replayed - 1, turn)
            return turn
        if not self._handed_over:
            self._handed_over = True
            self.checker.finish()
            assert self.task is not None
            await self.inner.start(self.task)
            summary = Observation(kind="operator_message", text=summary_of(self.events, self.at_turn))
            observations = [summary, *observations]
        return await self.inner.next_turn(observations)

    async def close(self) -> None:
        """Close the inner agent."""
        await self.inner.close()


class DivergenceChecker:
    """A bus subscriber comparing re-executed results and objects with the recorded ones."""

    def __init__(self, turns: list[RecordedTurn]) -> None:
        self.turns = turns
        self.mapping: list[tuple[str, str]] = []  # recorded value -> new value (ports, URLs, paths)
        self.bus: Any = None
        self.divergence: dict[str, Any] | None = None
        self._call_map: dict[str, tuple[int, str]] = {}  # new call id -> (recorded turn index, recorded call id)
        self._index_of_turn: dict[int, int] = {}  # new turn number -> recorded turn index
        self._objects: dict[int, list[str]] = {}  # recorded turn index -> object ids seen in the new episode
        self._open: int | None = None  # recorded turn index being re-executed
        self._done = False

    def expect(self, index: int, turn: AgentTurn) -> None:
        """The replay agent gave out recorded turn ``index``: close the previous one, pair the calls."""
        self.close_turn()
        self._open = index
        for new, old in zip(turn.tool_calls, self.turns[index].calls, strict=False):
            self._call_map[new.call_id] = (index, old.call_id)

    def close_turn(self) -> None:
        """The turn being re-executed ended (the bus is drained by then): compare its Stripe objects."""
        if self._open is not None:
            index, self._open = self._open, None
            self._compare_objects(index)

    def finish(self) -> None:
        """The replayed part is over: record that it matched, unless a divergence was already reported."""
        self.close_turn()
        if not self._done and self.divergence is None and self.bus is not None:
            self.bus.publish_nowait(Operator(action=DIVERGENCE, text=f"re-executed {len(self.turns)} turns: no divergence",
                                             details={"diverged": False, "turns": len(self.turns)}))
        self._done = True

    def _map(self, text: str) -> str:
        for old, new in self.mapping:
            text = text.replace(old, new)
        return text

    def __call__(self, ev: Event) -> None:
        if self._done or self.divergence is not None:
            return
        if isinstance(ev, ToolCall) and ev.call_id in self._call_map:
            self._index_of_turn[ev.turn] = self._call_map[ev.call_id][0]
        elif isinstance(ev, ToolResult) and ev.call_id in self._call_map:
            index, old_id = self._call_map[ev.call_id]
            self._compare_result(index, old_id, ev)
        elif isinstance(ev, StripeObject) and ev.turn in self._index_of_turn:
            seen = self._objects.setdefault(self._index_of_turn[ev.turn], [])
            if ev.object_id not in seen:
                seen.append(ev.object_id)

    def _compare_result(self, index: int, old_id: str, new: ToolResult) -> None:
        rt = self.turns[index]
        old = rt.results.get(old_id)
        if old is None:
            return
        what: list[str] = []
        if bool(old.is_error) != bool(new.is_error) or old.exit_code != new.exit_code:
            what.append("status")
        old_ids, new_ids = stripe_ids(self._map(old.output)), stripe_ids(new.output)
        if old_ids != new_ids:
            what.append("stripe ids")
        if not old.sidecar and comparable(self._map(old.output)) != comparable(new.output):
            what.append("output")
        if what:
            self._report(rt.turn, new.turn, f"turn {rt.turn}: {new.tool} result differs ({', '.join(what)})",
                         {"call_id": new.call_id, "recorded_call_id": old_id, "tool": new.tool, "differs": what,
                          "recorded_ids": old_ids, "new_ids": new_ids,
                          "recorded_output": old.output[:2000], "new_output": new.output[:2000]})

    def _compare_objects(self, index: int) -> None:
        seen = self._objects.pop(index, [])
        rt = self.turns[index]
        if self.divergence is None and sorted(seen) != sorted(rt.object_ids):
            self._report(rt.turn, None, f"turn {rt.turn}: Stripe objects differ",
                         {"differs": ["stripe objects"], "recorded_ids": rt.object_ids, "new_ids": seen})

    def _report(self, recorded_turn: int, new_turn: int | None, text: str, details: dict[str, Any]) -> None:
        self.divergence = {"recorded_turn": recorded_turn, "text": text, **details}
        if self.bus is not None:
            self.bus.publish_nowait(Operator(action=DIVERGENCE, text=text, call_id=str(details.get("call_id", "")),
                                             details={"diverged": True, "recorded_turn": recorded_turn, **details}),
                                    turn=new_turn)


class ForkEpisode(Episode):
    """An Episode whose header records where it was forked from and whose bus feeds the divergence check."""

    fork: ForkAgent
    forked_from: dict[str, Any]

    def _open_trace(self, episode_dir: Path) -> None:
        # The sandbox's header_extra hook is how extra header fields get in without changing Episode.
        sandbox, forked = self.sandbox, self.forked_from
        previous = getattr(sandbox, "header_extra", None)
        sandbox.header_extra = lambda: {**(previous() if previous else {}), "forked_from": forked}
        super()._open_trace(episode_dir)
        turn = forked.get("turn")
        record_child(Path(forked["trace"]), episode_dir / TRACE_NAME, turn if isinstance(turn, int) else None,
                     "" if isinstance(turn, int) else "rerun")
        bus = self.bus
        if bus is None:
            raise RuntimeError("the trace was opened before the episode's bus existed")
        self.fork.checker.bus = bus
        bus.subscribe(self.fork.checker, name="divergence")


def fork_episode(trace_path: Trace | Path, at_turn: int | None, config: EpisodeConfig,
                 subscribers: list[Handler] | None = None, *, reexecute: bool = False) -> ForkEpisode | RestoredEpisode:
    """An ``Episode`` (not started) that starts where ``trace_path`` was at the end of ``at_turn`` and continues
    with ``config.agent``.

    When the recorded episode kept a checkpoint of that turn (``runtime.checkpoints``) the fork restores it
    (``runtime.restore``: nothing re-executed, its cost independent of the turn), unless ``reexecute``; otherwise,
    and for an external harness, turns 1..N are re-executed on a fresh environment with the divergence check.
    ``at_turn=None`` re-runs the whole episode with nothing live (``replay --rerun``). An external harness
    (an agent with ``fork_from``) re-executes its own calls, its model answered from the episode's recording.
    """
    trace = opened(trace_path)
    trace_path, header = Path(trace.path), trace.header  # (an episode directory stands for its trace.jsonl)
    if at_turn is not None and at_turn < 0:
        raise UserError("--fork-at must be a turn number, 0 or more")
    if not config.seed and isinstance(header.seeds, dict) and isinstance(header.seeds.get("emulator"), int):
        config.seed = header.seeds["emulator"]  # same seed, same ids: that is what makes the comparison work
    checkpoint = checkpoint_at(trace_path, at_turn) if at_turn is not None and not reexecute else None
    restorable = checkpoint is not None and config.backend == header.backend == "emulator" and config.sandbox == "local"
    if restorable:
        assert checkpoint is not None
        episode = restored_episode(trace, checkpoint, config, summary_of, subscribers)
        if getattr(episode.fork.inner if episode.fork else None, "fork_from", None) is None:
            return episode
        # an external harness continues from its recorded model answers: its own calls are re-executed
    fork = ForkEpisode(config, subscribers)
    fork.prepare()
    return _reexecuting(fork, trace, trace_path, at_turn)


def _reexecuting(episode: ForkEpisode, trace: Trace, trace_path: Path, at_turn: int | None) -> ForkEpisode:
    """Give ``episode`` the agent that re-executes turns 1..N (an external harness's own, else ``ForkAgent``)."""
    external = getattr(episode.agent, "fork_from", None)
    if external is not None:
        fork = external(trace_path, at_turn)
    else:
        fork = ForkAgent(episode.agent, trace, max((e.turn for e in trace.iter_events()), default=0)
                         if at_turn is None else at_turn)
    episode.agent = fork
    episode.fork = fork
    episode.forked_from = {"trace": str(trace_path.resolve()), "turn": at_turn if at_turn is not None else "all"}
    return episode


def fork_config(trace_path: Trace | Path, agent: str, **overrides: Any) -> EpisodeConfig:
    """An ``EpisodeConfig`` for forking the trace (open, or its path): its environment and seed, the chosen agent."""
    header = opened(trace_path).header
    if not header.env:
        raise UserError(f"{trace_path}: the trace does not say which environment it ran (header.env)")
    seed = header.seeds.get("emulator", 0) if isinstance(header.seeds, dict) else 0
    # A benchmark folder's environment is found by its path (recorded in the header), not by id.
    bench = header.extra.get("bench_folder") if isinstance(header.extra, dict) else None
    env = bench if bench and Path(bench).is_dir() else header.env
    return EpisodeConfig(env=env, agent=agent, seed=int(seed or 0), **overrides)


__all__ = ["DIVERGENCE", "DivergenceChecker", "ForkAgent", "ForkEpisode", "fork_config", "RecordedTurn", "fork_episode",
           "recorded_turns", "comparable", "stripe_ids",
           "summary_of"]
