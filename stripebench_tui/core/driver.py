"""The episode loop: ask the agent, run its tool calls, publish everything, obey the operator.

One coroutine (``Driver.run``) plays the whole episode; nothing blocks a thread.
Per agent turn: observations in → ``agent.next_turn`` → a ``model_message`` →
for each call: ``tool_call``, approval if the policy asks for it, the tool via the
``ToolExecutor``, ``tool_result`` → turn-end hooks (live grading) → the bus is
drained and the recorder fsyncs → a ``harness_time`` event says how long those took
(by the part each hook is marked with, ``core.profile.harness_part``) → limits are
checked → next turn. The final hooks are timed the same way before ``episode_end``.

Operator commands (``stripebench_tui.core.operator``) arrive on a queue at any
time. While the agent thinks or a tool runs, ``stop`` cancels the work at once,
``pause``/``step``/``resume`` are recorded at once and take effect at the turn
boundary, and ``inject``/``tool_call`` wait for the boundary. Operator tool calls
and injects made between agent turns get a turn of their own (an operator turn).

An ``AgentTurn`` with ``done`` ends the episode after its tool calls (if any) ran.
Wall time counts only time not paused, so an operator inspecting a paused episode
is not timed out. The episode always ends with one ``episode_end`` event (also on
an agent error, a broken tool executor, a failed recorder, or cancellation of the
task) and the recorder is closed, so the trace is never lost.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from stripebench_tui.core import operator as op
from stripebench_tui.core.agent import Agent, AgentError, AgentTurn, Observation, Task, ToolRequest
from stripebench_tui.core.breakpoints import BREAK_HIT, BreakpointError, BreakpointSet
from stripebench_tui.core.bus import EventBus
from stripebench_tui.core.events import OPERATOR, EpisodeEnd, ModelMessage, Operator, Service, ToolCall, ToolResult
from stripebench_tui.core.executor import ToolExecutor
from stripebench_tui.core.limits import ActiveTime, Limits, Usage, exceeded
from stripebench_tui.core.profile import PUBLISH, Stopwatch, part_of
from stripebench_tui.core.tool_types import ToolOutcome

log = logging.getLogger(__name__)

# A turn-end hook gets the driver (for .bus, .turn, .usage) and may publish events (e.g. grader verdicts).
TurnHook = Callable[["Driver"], Awaitable[Any]]
# A final hook runs before episode_end; returning a FinalScore puts its score on episode_end.
FinalHook = Callable[["Driver"], Awaitable["FinalScore | None"]]

CANCEL_GRACE = 5.0  # seconds an agent or tool gets to finish cancelling before we stop waiting for it


@dataclass
class FinalScore:
    score: float | None = None
    passed: bool | None = None


class _End(Exception):
    """Leaves the loop with an episode_end reason."""

    def __init__(self, reason: str, error: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.error = error


@dataclass
class _Pending:
    call: ToolCall
    decision: op.Command | None = None


@dataclass
class Driver(op.Controls):
    """Plays one episode; see the module docstring. Build it, then ``await driver.run()``."""

    agent: Agent
    executor: ToolExecutor
    task: Task
    bus: EventBus = field(default_factory=EventBus)
    recorder: Any = None  # a Recorder (core.recorder); fsynced at turn ends, closed at the end
    approval: op.ApprovalPolicy = op.NEVER
    limits: Limits = field(default_factory=Limits)
    turn_end_hooks: list[TurnHook] = field(default_factory=list)
    final_hooks: list[FinalHook] = field(default_factory=list)
    start_paused: bool = False
    tell_agent_operator_calls: bool = True  # operator tool results reach the agent as operator messages
    on_status: list[Callable[[str], None]] = field(default_factory=list)
    breakpoints: BreakpointSet = field(default_factory=BreakpointSet)  # a hit pauses before the next model call
    # False when nobody can resume (headless, stdin at its end): a hit is recorded and the episode runs on.
    pause_at_hits: bool = True

    def __post_init__(self) -> None:
        self.usage = Usage()
        self.status = ""
        self.end: EpisodeEnd | None = None
        self.end_reason = ""  # why the episode is ending, set before the final hooks run (they may read it)
        self._commands: asyncio.Queue[op.Command] = asyncio.Queue()
        self._deferred: list[op.Command] = []
        self._observations: list[Observation] = []
        self._paused = self.start_paused
        self._pause_after_turn = False
        self._turn_actor = ""  # actor of the current turn: "agent", "operator" or "" (setup)
        self._operator_calls = 0
        self._active = ActiveTime(self.bus.clock, self.bus.started_at)
        self._pending: _Pending | None = None
        self._finishing = False

    # ---- commands (safe to call from the TUI's event loop at any time; shortcuts in op.Controls) ----

    def send(self, command: op.Command) -> None:
        """Queue an operator command for the driver (shortcuts: pause(), step(), inject(), … from Controls)."""
        self._commands.put_nowait(command)

    @property
    def turn(self) -> int:
        return self.bus.turn

    @property
    def pending_call(self) -> ToolCall | None:
        """The agent's call waiting for approval, if any."""
        return self._pending.call if self._pending else None

    # ---- the episode ----

    async def run(self) -> EpisodeEnd:
        """Play the episode to its end and return the ``episode_end`` event (also recorded)."""
        try:
            try:
                reason, error = await self._play()
            except _End as end:
                reason, error = end.reason, end.error
            except AgentError as exc:
                reason, error = op.ERROR, f"agent error: {exc}"
            except Exception as exc:  # a broken agent (or driver bug) still ends the trace cleanly
                log.exception("episode failed")
                reason, error = op.ERROR, f"{type(exc).__name__}: {exc}"
            self._finishing = True  # limits no longer apply: final grading runs to completion
            self.end_reason = reason
            watch = Stopwatch(self.bus.clock)
            final = await self._final_hooks(watch)
            # The last turn's hits and those of the final grading and findings: no model call is left to pause
            # before, but each hit is still recorded.
            await self._breakpoint_hits(can_pause=False)
            watch.lap(PUBLISH)
            if self._times_harness(self.final_hooks):
                self.bus.publish_nowait(watch.record("final"))
            self._publish_end(reason, error, final)
            await self.bus.drain(timeout=CANCEL_GRACE)
            return self.end  # type: ignore[return-value]
        except asyncio.CancelledError:
            if self.end is None:
                self._publish_end(op.STOPPED, "cancelled")
            raise
        finally:
            self._close_recorder()
            await self._close_agent()

    async def _play(self) -> tuple[str, str]:
        await self._set_status(op.PAUSED if self._paused else op.RUNNING)
        self.bus.subscribe(self.breakpoints, name="breakpoints")
        for bp in self.breakpoints.breakpoints:  # the ones given at the start (--break) are recorded too
            await self.bus.publish(Operator(action=op.BreakAdd.action, text=bp.expr, details={"id": bp.id, "by": "start"}))
        if not self.task.tools:
            self.task.tools = list(await self._interruptible(self.executor.tools()))
        if self.task.log is None:
            self.task.log = self._agent_log
        if self.approval.patterns and self.task.needs_approval is None:
            self.task.needs_approval = self.approval.needs_approval
        await self._interruptible(self.agent.start(self.task))
        while True:
            await self._checkpoint()
            self._check_limits()
            done = await self._agent_turn()
            await self._end_turn()
            if done:
                return op.AGENT_DONE, ""
            self._check_limits()

    async def _agent_turn(self) -> bool:
        """One agent turn; True when the agent said it is done."""
        self._begin_turn("agent")
        observations, self._observations = self._observations, []
        answer: AgentTurn = await self._interruptible(self.agent.next_turn(observations))
        self.usage.agent_turns += 1
        self.usage.tokens_in += answer.tokens_in or 0
        self.usage.tokens_out += answer.tokens_out or 0
        self.usage.cost_usd += answer.cost_usd or 0.0
        has_usage = any(v is not None for v in (answer.tokens_in, answer.tokens_out, answer.cost_usd))
        if answer.text or answer.reasoning or has_usage or not answer.tool_calls:
            await self.bus.publish(
                ModelMessage(
                    role="assistant",
                    text=answer.text,
                    reasoning=answer.reasoning,
                    model=answer.model,
                    tokens_in=answer.tokens_in,
                    tokens_out=answer.tokens_out,
                    cost_usd=answer.cost_usd,
                    ttft=answer.ttft,
                    latency=answer.latency,
                )
            )
        for i, request in enumerate(answer.tool_calls, 1):
            if not request.call_id:  # the reducer and the trace pair calls with results by id
                request.call_id = f"t{self.turn}-{i}"
        if answer.observed:
            await self._observed_calls(answer.tool_calls)
            return answer.done
        for request in answer.tool_calls:
            self._check_failure()
            await self._agent_call(request)
        return answer.done

    async def _observed_calls(self, requests: list[ToolRequest]) -> None:
        """Calls the agent's harness runs itself: record each, then the results the harness reports.

        The operator decides on every call the policy holds before any result is awaited: the harness's
        gateway keeps the whole reply until each of its held calls is decided (``agent.decide``)."""
        observer: Any = self.agent
        calls, rejected = [], {}
        for request in requests:
            self._check_failure()
            call = ToolCall(call_id=request.call_id, tool=request.tool, arguments=dict(request.arguments),
                            server=self._server_of(request.tool))
            await self.bus.publish(call)
            calls.append(call)
            if self.approval.needs_approval(call.tool):
                decision = await self._await_approval(call)
                if hasattr(observer, "decide"):
                    observer.decide(call.call_id, decision)
                if isinstance(decision, op.Reject):
                    rejected[call.call_id] = op.rejection_text(decision.reason)
        for call in calls:
            if call.call_id in rejected:
                await self.bus.publish(ToolResult(call_id=call.call_id, tool=call.tool, output=rejected[call.call_id],
                                                  is_error=True))
                continue
            outcome: ToolOutcome = await self._interruptible(observer.observed_result(call.call_id))
            await self.bus.publish(ToolResult(call_id=call.call_id, tool=call.tool, output=outcome.text,
                                              is_error=outcome.is_error, exit_code=outcome.exit_code,
                                              duration=outcome.duration or 0.0, startup=outcome.startup,
                                              images=list(outcome.images)))

    def _agent_log(self, text: str, stream: str = "stdout") -> None:
        self.bus.publish_nowait(Service(service=getattr(self.agent, "name", "") or "agent", status="log",
                                        stream=stream, text=text))

    async def _agent_call(self, request: ToolRequest) -> None:
        call = ToolCall(
            call_id=request.call_id, tool=request.tool, arguments=dict(request.arguments), server=self._server_of(request.tool)
        )
        await self.bus.publish(call)
        arguments = call.arguments
        if self.approval.needs_approval(call.tool):
            decision = await self._await_approval(call)
            if isinstance(decision, op.Reject):
                self._observations.append(
                    Observation(
                        kind="rejected",
                        text=op.rejection_text(decision.reason),
                        call_id=call.call_id,
                        tool=call.tool,
                        is_error=True,
                    )
                )
                return
            if isinstance(decision, op.Edit):
                arguments = decision.arguments
        result = await self._execute(call, arguments)
        self._observations.append(
            Observation(kind="tool_result", text=result.output, call_id=call.call_id, tool=call.tool, is_error=result.is_error)
        )

    async def _execute(self, call: ToolCall, arguments: dict[str, Any]) -> ToolResult:
        started = self.bus.clock()
        try:
            outcome: ToolOutcome = await self._interruptible(self.executor.call(call.tool, arguments))
        except (_End, asyncio.CancelledError):
            raise
        except Exception as exc:  # the executor itself broke: record it and end the episode
            log.exception("tool executor failed")
            error = f"tool executor failed on {call.tool}: {type(exc).__name__}: {exc}"
            await self.bus.publish(
                ToolResult(call_id=call.call_id, tool=call.tool, output=error, is_error=True, duration=self.bus.clock() - started)
            )
            raise _End(op.ERROR, error) from exc
        duration = outcome.duration if outcome.duration is not None else max(0.0, self.bus.clock() - started)
        result = ToolResult(
            call_id=call.call_id,
            tool=call.tool,
            output=outcome.text,
            is_error=outcome.is_error,
            exit_code=outcome.exit_code,
            duration=duration,
            startup=min(outcome.startup, duration),
            images=list(outcome.images),
        )
        await self.bus.publish(result)
        return result

    # ---- approval ----

    async def _await_approval(self, call: ToolCall) -> op.Command:
        self._pending = _Pending(call)
        await self._set_status(op.WAITING_FOR_APPROVAL, call.call_id)
        try:
            while self._pending.decision is None:
                await self._handle(await self._commands.get(), busy=True)
            decision = self._pending.decision
        finally:
            self._pending = None
        await self._set_status(op.RUNNING)
        return decision

    def _decide(self, cmd: op.Approve | op.Edit | op.Reject) -> str:
        """Apply a decision to the pending call; returns why it was ignored ("" if applied)."""
        if self._pending is None:
            return "no tool call is waiting for approval"
        if cmd.call_id and cmd.call_id != self._pending.call.call_id:
            return f"the pending call is {self._pending.call.call_id}, not {cmd.call_id}"
        self._pending.decision = cmd
        return ""

    # ---- commands ----

    async def _handle(self, cmd: op.Command, busy: bool) -> None:
        """Apply one command; ``busy`` while the agent thinks, a tool runs or a call awaits approval."""
        details: dict[str, Any] = {}
        text, call_id = "", ""
        if isinstance(cmd, op.Stop):
            await self._record(cmd, text=cmd.reason)
            raise _End(op.STOPPED, "")
        if isinstance(cmd, (op.Inject, op.RunTool)):
            if busy:
                self._deferred.append(cmd)
                return
            if isinstance(cmd, op.Inject):
                await self._do_inject(cmd)
            else:
                await self._do_operator_call(cmd)
            return
        if isinstance(cmd, op.Pause):
            self._paused, self._pause_after_turn = True, False
        elif isinstance(cmd, op.Resume):
            self._paused, self._pause_after_turn = False, False
        elif isinstance(cmd, op.Step):
            # Paused: run one turn. Running: finish this turn, then pause.
            self._paused, self._pause_after_turn = False, True
        elif isinstance(cmd, (op.Approve, op.Edit, op.Reject)):
            pending = self._pending.call if self._pending else None
            ignored = self._decide(cmd)
            call_id = pending.call_id if pending and not ignored else cmd.call_id
            if ignored:
                details["ignored"] = ignored
            if isinstance(cmd, op.Edit):
                details["arguments"] = cmd.arguments
                if pending and not ignored:
                    details["previous"] = pending.arguments
            if isinstance(cmd, op.Reject):
                text = cmd.reason
        elif isinstance(cmd, (op.BreakAdd, op.BreakRemove)):
            text = self._change_breakpoints(cmd, details)
        else:
            details["ignored"] = f"unknown command {type(cmd).__name__}"
        await self._record(cmd, text=text, call_id=call_id, details=details)

    def _change_breakpoints(self, cmd: op.BreakAdd | op.BreakRemove, details: dict[str, Any]) -> str:
        if isinstance(cmd, op.BreakAdd):
            try:
                details["id"] = self.breakpoints.add(cmd.expr).id
            except BreakpointError as exc:
                details["ignored"] = str(exc)
            return cmd.expr
        removed = self.breakpoints.remove(cmd.id)
        details["id"] = cmd.id
        if removed is None:
            details["ignored"] = f"there is no breakpoint #{cmd.id}"
        return removed.expr if removed else ""

    async def _breakpoint_hits(self, can_pause: bool = True) -> None:
        """Record the hits since the last turn boundary; any hit pauses here, before the next model call.

        ``details["paused"]`` of each ``break_hit`` says whether it paused: not at the episode's end
        (``can_pause`` False) nor when ``pause_at_hits`` is off."""
        if not len(self.breakpoints):
            self.breakpoints.take_hits()
            return
        await self.bus.drain(timeout=CANCEL_GRACE)  # the breakpoint subscriber has seen this turn's events
        hits = self.breakpoints.take_hits()
        pause = bool(hits) and can_pause and self.pause_at_hits
        for hit in hits:
            await self.bus.publish(Operator(action=BREAK_HIT, text=hit.reason, details={**hit.details(), "paused": pause}))
        if pause:
            self._paused, self._pause_after_turn = True, False

    async def _record(self, cmd: op.Command, text: str = "", call_id: str = "", details: dict[str, Any] | None = None) -> None:
        await self.bus.publish(Operator(action=cmd.action, text=text, call_id=call_id, details=details or {}))

    async def _do_inject(self, cmd: op.Inject) -> None:
        self._begin_turn(OPERATOR)
        await self._record(cmd, text=cmd.text, details={"kind": cmd.kind})
        await self.bus.publish(ModelMessage(role=OPERATOR, text=cmd.text))
        self._observations.append(Observation(kind="operator_message", text=cmd.text))

    async def _do_operator_call(self, cmd: op.RunTool) -> None:
        self._begin_turn(OPERATOR)
        self._operator_calls += 1
        call = ToolCall(
            call_id=f"op-{self._operator_calls}",
            tool=cmd.tool,
            arguments=dict(cmd.arguments),
            actor=OPERATOR,
            server=self._server_of(cmd.tool),
        )
        await self._record(cmd, call_id=call.call_id, details={"tool": cmd.tool, "arguments": call.arguments})
        await self.bus.publish(call)
        result = await self._execute(call, call.arguments)
        if self.tell_agent_operator_calls:
            args = json.dumps(call.arguments, ensure_ascii=False, sort_keys=True)
            failed = " (failed)" if result.is_error else ""
            self._observations.append(
                Observation(
                    kind="operator_message",
                    text=f"The operator ran the tool {call.tool} {args}{failed}; it returned:\n{result.output}",
                    tool=call.tool,
                    is_error=result.is_error,
                )
            )

    async def _checkpoint(self) -> None:
        """Between turns: apply deferred and queued commands; wait here while paused (or on a breakpoint hit)."""
        await self._breakpoint_hits()
        while True:
            self._check_failure()
            if self._deferred:
                await self._handle(self._deferred.pop(0), busy=False)
                continue
            if not self._commands.empty():
                await self._handle(self._commands.get_nowait(), busy=False)
                continue
            if not self._paused:
                break
            await self._set_status(op.PAUSED)
            await self._handle(await self._commands.get(), busy=False)
        await self._set_status(op.RUNNING)

    async def _interruptible(self, awaitable: Awaitable[Any]) -> Any:
        """Await agent or tool work while handling commands; stop and the wall-time limit cancel it."""
        work = asyncio.ensure_future(awaitable)
        try:
            while True:
                getter = asyncio.ensure_future(self._commands.get())
                try:
                    done, _ = await asyncio.wait({work, getter}, timeout=self._wall_remaining(),
                                                 return_when=asyncio.FIRST_COMPLETED)
                finally:
                    if not getter.done():
                        getter.cancel()
                if getter in done:
                    await self._handle(getter.result(), busy=True)
                if work in done:
                    return work.result()
                if not done:
                    raise _End(op.WALL_TIME)
                self._check_failure()
        finally:
            if not work.done():
                work.cancel()
                await asyncio.wait({work}, timeout=CANCEL_GRACE)

    # ---- turns, limits, status ----

    def _begin_turn(self, actor: str) -> None:
        # Consecutive operator actions between agent turns share one operator turn.
        if actor == OPERATOR and self._turn_actor == OPERATOR:
            return
        self.bus.turn += 1
        self._turn_actor = actor

    async def _end_turn(self) -> None:
        watch = Stopwatch(self.bus.clock)
        for hook in self.turn_end_hooks:
            await self._run_hook(hook, "turn-end")
            watch.lap(part_of(hook))
        await self.bus.drain()
        if self.recorder is not None:
            self.recorder.end_turn()
        watch.lap(PUBLISH)
        if self._times_harness(self.turn_end_hooks):
            await self.bus.publish(watch.record("turn_end"))
        self._check_failure()
        if self._pause_after_turn:
            self._paused, self._pause_after_turn = True, False

    async def _run_hook(self, hook: Callable[[Driver], Awaitable[Any]], kind: str) -> Any:
        try:
            return await self._interruptible(hook(self))
        except (_End, asyncio.CancelledError):
            raise
        except Exception as exc:  # a grader bug is shown, not fatal
            log.exception("%s hook failed", kind)
            name = getattr(hook, "__qualname__", repr(hook))
            await self.bus.publish(
                Service(service="driver", status="log", stream="stderr",
                        text=f"{kind} hook {name} failed: {type(exc).__name__}: {exc}")
            )
            return None

    def _times_harness(self, hooks: list[Any]) -> bool:
        # A driver with no hook and no trace to fsync (a bare one, in tests) has no harness work of its own to time.
        return bool(hooks) or self.recorder is not None

    async def _final_hooks(self, watch: Stopwatch) -> FinalScore:
        final = FinalScore()
        for hook in self.final_hooks:
            try:
                got = await self._run_hook(hook, "final")
            except _End:  # a stop during final grading ends the grading, not the recording
                break
            finally:
                watch.lap(part_of(hook))
            if isinstance(got, FinalScore):
                final = got
        return final

    def _wall_remaining(self) -> float | None:
        if self.limits.wall_time is None or self._finishing:
            return None
        return max(0.0, self.limits.wall_time - self._active())

    def _check_failure(self) -> None:
        if self.bus.failure:
            raise _End(op.ERROR, self.bus.failure)

    def _check_limits(self) -> None:
        self._check_failure()
        hit = exceeded(self.limits, self.usage, self._active())
        if hit is not None:
            raise _End(*hit)

    async def _set_status(self, status: str, call_id: str = "") -> None:
        if status == self.status:
            return
        # Time shown as paused or waiting for the operator does not count against the wall-time limit.
        self._active.hold(status in (op.PAUSED, op.WAITING_FOR_APPROVAL))
        self.status = status
        await self.bus.publish(Operator(action=op.STATUS_ACTION, text=status, call_id=call_id, details={"by": "driver"}))
        self._notify(status)

    def _notify(self, status: str) -> None:
        for callback in self.on_status:
            try:
                callback(status)
            except Exception:  # a UI callback must not break the episode
                log.exception("status callback failed")

    def _server_of(self, tool: str) -> str:
        return next((t.server for t in self.task.tools if t.name == tool), "")

    # ---- the end ----

    def _publish_end(self, reason: str, error: str, final: FinalScore | None = None) -> None:
        """Publish the end without awaiting, so it also works while the task is being cancelled."""
        final = final or FinalScore()
        self.status = op.ENDED
        self.bus.publish_nowait(Operator(action=op.STATUS_ACTION, text=op.ENDED, details={"by": "driver"}))
        self.end = self.bus.publish_nowait(EpisodeEnd(reason=reason, error=error,
                                                      score=final.score, passed=final.passed))  # type: ignore[assignment]
        self._notify(op.ENDED)

    def _close_recorder(self) -> None:
        # The recorder hands its queued events to the writer synchronously, then closes the file.
        if self.recorder is not None:
            try:
                self.recorder.close()
            except Exception:  # closing twice or a full disk must not hide the episode's end
                log.exception("closing the recorder failed")

    async def _close_agent(self) -> None:
        try:
            await asyncio.wait_for(self.agent.close(), CANCEL_GRACE)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("closing the agent failed")


__all__ = ["CANCEL_GRACE", "Driver", "FinalHook", "FinalScore", "Limits", "TurnHook", "Usage"]
