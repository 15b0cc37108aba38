"""Scripted stand-ins for an agent and a tool executor, plus a controllable clock, for driver tests."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from stripebench_tui.core.agent import AgentTurn, Observation, Task, ToolRequest
from stripebench_tui.core.bus import EventBus
from stripebench_tui.core.driver import Driver
from stripebench_tui.core.events import Event
from stripebench_tui.core.tool_types import ToolOutcome, ToolSpec


class FakeClock:
    """A monotonic clock that only moves when told to."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def call(call_id: str, tool: str = "shell", **arguments: Any) -> ToolRequest:
    return ToolRequest(call_id=call_id, tool=tool, arguments=arguments)


def turn(*calls: ToolRequest, text: str = "", done: bool = False, **usage: Any) -> AgentTurn:
    return AgentTurn(text=text, tool_calls=list(calls), done=done, **usage)


# One script step: an AgentTurn, an exception to raise, or a (possibly async) function of the observations.
Step = AgentTurn | BaseException | Callable[[list[Observation]], Any]


class ScriptedAgent:
    """Plays a list of steps; the last step repeats when the list runs out (if ``repeat_last``)."""

    name = "scripted"

    def __init__(self, steps: list[Step], repeat_last: bool = False) -> None:
        self.steps = list(steps)
        self.repeat_last = repeat_last
        self.task: Task | None = None
        self.seen: list[list[Observation]] = []
        self.closed = 0
        self.cancelled = False

    async def start(self, task: Task) -> None:
        self.task = task

    async def next_turn(self, observations: list[Observation]) -> AgentTurn:
        self.seen.append(list(observations))
        i = len(self.seen) - 1
        if i >= len(self.steps):
            if not self.repeat_last:
                raise AssertionError("the driver asked for more turns than scripted")
            i = len(self.steps) - 1
        step = self.steps[i]
        try:
            if isinstance(step, BaseException):
                raise step
            if isinstance(step, AgentTurn):
                return step
            got = step(observations)
            if inspect.isawaitable(got):
                got = await got
            return got
        except asyncio.CancelledError:
            self.cancelled = True
            raise

    async def close(self) -> None:
        self.closed += 1


@dataclass
class ScriptedTools:
    """An in-memory ToolExecutor: each tool is a function of its arguments (or an exception to raise)."""

    handlers: dict[str, Callable[[dict[str, Any]], Any]] = field(default_factory=dict)
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    async def tools(self) -> list[ToolSpec]:
        return [ToolSpec(name=n, description=f"the {n} tool",
                         input_schema={"type": "object"}, server="scripted") for n in self.handlers]

    async def call(self, tool: str, arguments: dict[str, Any]) -> ToolOutcome:
        self.calls.append((tool, dict(arguments)))
        handler = self.handlers.get(tool)
        if handler is None:
            return ToolOutcome(text=f"unknown tool {tool}", is_error=True)
        got = handler(arguments)
        if inspect.isawaitable(got):
            got = await got
        return got if isinstance(got, ToolOutcome) else ToolOutcome(text=str(got), exit_code=0)


def echo_tools() -> ScriptedTools:
    """shell echoes its cmd; files reports its path; both take 0.5 s by their own account."""
    return ScriptedTools(
        {
            "shell": lambda a: ToolOutcome(text=f"ran {a.get('cmd', '')}", exit_code=0, duration=0.5),
            "files": lambda a: ToolOutcome(text=f"viewed {a.get('path', '')}", duration=0.5),
        }
    )


class Collector:
    """A bus subscriber that keeps every event it is handed."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def __call__(self, event: Event) -> None:
        self.events.append(event)

    def types(self) -> list[str]:
        return [e.type for e in self.events]


def make_driver(agent: ScriptedAgent, tools: ScriptedTools | None = None, clock: FakeClock | None = None, **kwargs: Any):
    """A driver on a fresh bus with a collector attached; returns (driver, collector)."""
    bus = EventBus(clock=clock or FakeClock())
    seen = Collector()
    bus.subscribe(seen, name="collector")
    driver = Driver(agent=agent, executor=tools or echo_tools(),
                    task=Task(env_id="test", problem="do it", tools=[]), bus=bus, **kwargs)
    return driver, seen


async def wait_status(driver: Driver, status: str, timeout: float = 5.0) -> None:
    """Wait until the driver reports ``status``."""
    async def poll() -> None:
        while driver.status != status:
            await asyncio.sleep(0.001)

    await asyncio.wait_for(poll(), timeout)


async def wait_until(predicate: Callable[[], bool], timeout: float = 5.0) -> None:
    """Wait until ``predicate()`` holds (checked every millisecond)."""
    async def poll() -> None:
        while not predicate():
            await asyncio.sleep(0.001)

    await asyncio.wait_for(poll(), timeout)
