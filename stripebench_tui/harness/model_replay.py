"""Record, replay and fork an external harness: its model answered from an episode's recording, then live.

Every episode of an ``ExternalAgent`` records its model traffic in
``<episode>/model/`` (``model_recorder``; see ``gateway.recording``). ``ExternalFork``
restarts the same harness on a fresh, equally seeded environment with the
gateway serving the recorded responses for turns 1..N (``gateway.recorded``), so
the harness makes its own tool calls again; the first request whose tool results
differ from the recorded ones, or that the recording cannot answer, is published
as an ``operator`` event with ``action="divergence"`` (as ``runtime.fork`` does for
our own agents). After turn N the harness goes on with the live upstream
(``--base-url`` or the provider's variables); with none, or for a whole re-run
(``at_turn=None``), the episode ends where the recording does.
"""

from __future__ import annotations

import asyncio
import functools
import os
from pathlib import Path
from typing import Any

from stripebench_tui.core.agent import AgentTurn, Observation, Task
from stripebench_tui.core.events import Operator
from stripebench_tui.core.redact import Redactor
from stripebench_tui.errors import BadFileError, UserError
from stripebench_tui.formats.open import open_episode
from stripebench_tui.gateway.recorded import RecordedUpstream
from stripebench_tui.gateway.recording import EXCHANGES, ModelRecorder, load_recording
from stripebench_tui.runtime.fork import DIVERGENCE, comparable

MODEL_DIR = "model"  # beside trace.jsonl
_LIVE_VARS = {"anthropic": ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
              "openai": ("OPENAI_BASE_URL", "OPENAI_API_KEY")}


def normalizer(context: dict[str, Any]):  # Callable[[str], str]
    """Episode paths, ports and URLs written as ``${NAME}`` and timings masked, so two runs' results compare."""
    pairs = sorted(((str(v), k) for k, v in context.items() if isinstance(v, (str, int)) and len(str(v)) >= 4
                    and "KEY" not in k and "TOKEN" not in k), key=lambda p: len(p[0]), reverse=True)

    def normalize(text: str) -> str:
        for value, name in pairs:
            text = text.replace(value, "${" + name + "}")
        return comparable(text)

    return normalize


def model_recorder(task: Task, redactor: Redactor, replay: RecordedUpstream | None = None) -> ModelRecorder | None:
    """The recorder of an episode's model traffic (in ``<episode>/model``, answering from ``replay`` when forked),
    or None outside an episode directory."""
    if not task.workspace:
        return None
    recorder = ModelRecorder(Path(task.workspace).resolve().parent / MODEL_DIR, redactor, normalizer(task.context))
    recorder.replay = replay
    if replay is not None:
        replay.recorder = recorder
    return recorder


# Any: an ExternalAgent (harness.external imports this module)
def has_live_upstream(agent: Any) -> bool:
    """Whether the harness's family has an upstream to continue with: ``--base-url`` or the provider's variables."""
    family = getattr(agent.harness, "protocol", "anthropic")
    return bool(getattr(agent, "base_url", None)) or any(os.environ.get(v) for v in _LIVE_VARS.get(family, ()))


def _recorded_variables(trace_path: Path) -> dict[str, str]:
    """The recorded episode's ports, URLs and paths (its header's ``extra.variables``)."""
    extra = open_episode(trace_path).header.extra
    variables = extra.get("variables") if isinstance(extra, dict) else None
    return {str(k): str(v) for k, v in (variables or {}).items()}


class RecordingDivergence:
    """What ``ForkEpisode`` expects of a fork's checker: the bus to publish on, and the first divergence."""

    def __init__(self) -> None:
        self.bus: Any = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.divergence: dict[str, Any] | None = None

    # Any: a bus subscriber takes any event and ignores it
    def __call__(self, event: Any) -> None:
        """(A bus subscriber by contract; the comparison happens at the gateway, not on events.)"""

    def report(self, turn: int, text: str, details: dict[str, Any]) -> None:
        """The first divergence (from any thread)."""
        if self.divergence is not None:
            return
        self.divergence = {"recorded_turn": turn, "text": text, **details}
        self._publish(Operator(action=DIVERGENCE, text=text, call_id=str(details.get("call_id", "")),
                               details={"diverged": True, "recorded_turn": turn, **details}), turn)

    def replayed(self, turns: int) -> None:
        """The replayed part is over: say that it matched, unless a divergence was reported."""
        if self.divergence is None:
            self._publish(Operator(action=DIVERGENCE, text=f"re-executed {turns} turns from the model recording: "
                                   "no divergence", details={"diverged": False, "turns": turns}), None)

    def _publish(self, event: Operator, turn: int | None) -> None:
        if self.bus is None or self.loop is None or self.loop.is_closed():
            return
        publish = functools.partial(self.bus.publish_nowait, event, turn=turn)
        try:
            here = asyncio.get_running_loop()
        except RuntimeError:
            here = None
        if here is self.loop:
            publish()
        else:  # the gateway's thread
            self.loop.call_soon_threadsafe(publish)


class ExternalFork:
    """An ``ExternalAgent`` whose model is answered from a recording for turns 1..N (see the module docstring)."""

    # Any: an ExternalAgent (harness.external imports this module)
    def __init__(self, inner: Any, trace_path: Path, at_turn: int | None, *, offline: bool = False) -> None:
        self.inner = inner
        self.name = inner.name
        self.model = getattr(inner, "model", "")
        self.at_turn = at_turn
        directory = Path(trace_path).resolve().parent / MODEL_DIR
        if not (directory / EXCHANGES).is_file():
            raise UserError(f"{trace_path}: no model recording beside it ({directory / EXCHANGES}); only episodes of an "
                            "external harness (claude-code, --agent-cmd) have one")
        try:
            recording = load_recording(directory)
        except (OSError, ValueError) as exc:
            raise BadFileError(f"cannot read the model recording {directory}: {exc}") from None
        self.live = not offline and at_turn is not None and has_live_upstream(inner)
        self.checker = RecordingDivergence()
        self._ended: asyncio.Event | None = None
        try:
            self.replay = RecordedUpstream(recording, at_turn, live=self.live, on_divergence=self.checker.report,
                                           on_end=self._recording_ended, on_replayed=self.checker.replayed)
        except ValueError as exc:
            raise UserError(f"--fork-at {at_turn}: {exc}") from None
        self.turns = max((r.turn or 0 for r in recording), default=0)
        inner.replay = self.replay
        self.recorded_vars = _recorded_variables(trace_path)
        self.task: Task | None = None

    @property
    def handed_over(self) -> bool:
        """Whether the recorded turns are all served (the harness talks to the live upstream, or the episode ends)."""
        return not self.replay.replaying

    def __getattr__(self, name: str) -> Any:  # secrets, process, wait_held, … of the harness
        return getattr(self.inner, name)

    async def start(self, task: Task) -> None:
        """Start the harness with its gateway answering from the recording."""
        self.task = task
        self.checker.loop = asyncio.get_running_loop()
        self._ended = asyncio.Event()
        pairs = {old: str(task.context[k]) for k, old in self.recorded_vars.items()
                 if k in task.context and old and old != str(task.context[k])}
        # Longest first, so a URL is replaced as a whole before the port inside it (as the replay agent does).
        self.replay.mapping = sorted(pairs.items(), key=lambda kv: len(kv[0]), reverse=True)
        await self.inner.start(task)

    def _recording_ended(self) -> None:
        loop, ended = self.checker.loop, self._ended
        if loop is not None and ended is not None and not loop.is_closed():
            loop.call_soon_threadsafe(ended.set)

    async def next_turn(self, observations: list[Observation]) -> AgentTurn:
        """The harness's next turn, or the end of the episode once the recording ended with no live upstream."""
        assert self._ended is not None
        if not self._ended.is_set():
            turn = asyncio.ensure_future(self.inner.next_turn(observations))
            ended = asyncio.ensure_future(self._ended.wait())
            await asyncio.wait({turn, ended}, return_when=asyncio.FIRST_COMPLETED)
            ended.cancel()
            if turn.done():
                result = turn.result()
                if result.done:
                    self._harness_done()
                return result
            turn.cancel()  # the harness's request was refused: it would only retry
            await asyncio.gather(turn, return_exceptions=True)
        if self.task is not None and self.task.log is not None:
            self.task.log(f"the model recording ends after turn {self.replay.turns_served} and there is no live upstream: "
                          "the episode ends here", "stdout")
        return AgentTurn(done=True, model=self.model)

    def _harness_done(self) -> None:
        if self.replay.replaying:
            served = self.replay.turns_served
            self.checker.report(served, f"turn {served}: {self.name} ended; the recording has {self.turns} turns",
                                {"differs": ["ended"], "turns": served, "recorded_turns": self.turns})
        self.replay.finish()

    async def close(self) -> None:
        """End the harness and its gateway."""
        await self.inner.close()


__all__ = ["ExternalFork", "MODEL_DIR", "RecordingDivergence", "has_live_upstream", "model_recorder", "normalizer"]
