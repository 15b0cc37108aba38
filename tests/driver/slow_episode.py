"""A never-ending episode for the kill -9 test: ``python slow_episode.py TRACE``.

A slow scripted agent calls the shell tool once per turn, forever; the recorder
writes TRACE. The test kills this process mid-episode and reads what is left.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from stripebench_tui.core.agent import AgentTurn, Task, ToolRequest
from stripebench_tui.core.bus import EventBus
from stripebench_tui.core.driver import Driver
from stripebench_tui.core.events import Header
from stripebench_tui.core.recorder import Recorder
from stripebench_tui.core.tool_types import ToolOutcome, ToolSpec


class SlowAgent:
    name = "slow"

    def __init__(self) -> None:
        self.turns = 0

    async def start(self, task: Task) -> None:
        pass

    async def next_turn(self, observations: list) -> AgentTurn:
        await asyncio.sleep(0.02)
        self.turns += 1
        return AgentTurn(text=f"turn {self.turns}",
                         tool_calls=[ToolRequest(f"c{self.turns}", "shell", {"cmd": f"echo {self.turns}"})])

    async def close(self) -> None:
        pass


class EchoTools:
    async def tools(self) -> list[ToolSpec]:
        return [ToolSpec("shell", "run a command", {"type": "object"})]

    async def call(self, tool: str, arguments: dict[str, Any]) -> ToolOutcome:
        return ToolOutcome(text=arguments["cmd"].removeprefix("echo "), exit_code=0)


async def main(path: str) -> None:
    bus = EventBus()
    recorder = Recorder.create(path, Header(env="slow", agent="slow")).attach(bus)
    driver = Driver(SlowAgent(), EchoTools(), Task(env_id="slow", problem="never ends", tools=[]), bus=bus, recorder=recorder)
    await driver.run()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
