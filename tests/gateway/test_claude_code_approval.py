"""A real Claude Code (npm, pinned) with ``--approve Bash``: each Bash call waits at the gateway for the operator.

Approve lets the command run (it had not while held), an edit changes what runs,
a reject makes Claude Code go on to its next turn (the model is shown its call
and the reason), and stop while an approved command runs leaves no process.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from stripebench_tui.agents import create_agent
from stripebench_tui.core import operator as op
from stripebench_tui.core.agent import Task
from stripebench_tui.core.bus import EventBus
from stripebench_tui.core.driver import Driver
from stripebench_tui.core.limits import Limits
from stripebench_tui.gateway.hold import STAND_IN
from stripebench_tui.testing.fake_models import FakeModelServer
from stripebench_tui.testing.fake_wire import ScriptedCall, ScriptedTurn
from tests.gateway.conftest import REAL_KEY
from tests.gateway.test_claude_code import _processes_with, claude_code  # noqa: F401  (fixture)
from tests.gateway.test_external_agent import NoTools

pytestmark = [pytest.mark.slow, pytest.mark.node, pytest.mark.drill]

MARKER = "31338"


def bash(command: str) -> ScriptedCall:
    return ScriptedCall("Bash", {"command": command, "description": "run it"})


async def test_claude_code_bash_calls_wait_for_approve_edit_and_reject(claude_code: str, tmp_path: Path) -> None:  # noqa: F811 - pytest fixtures imported above, requested by name
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    turns = [ScriptedTurn(text="One.", tool_calls=[bash("echo one > one.txt")]),
             ScriptedTurn(text="Two.", tool_calls=[bash("echo original > two.txt")]),
             ScriptedTurn(text="Three.", tool_calls=[bash("touch three.txt")]),
             ScriptedTurn(text="Wait.", tool_calls=[bash(f"python3 -c 'import time; time.sleep({MARKER})'")])]
    with FakeModelServer(turns, api_key=REAL_KEY) as fake:
        agent = create_agent("claude-code", base_url=fake.url, api_key=REAL_KEY, model="claude-sonnet-4-5",
                             env={**os.environ, "ANTHROPIC_API_KEY": REAL_KEY})
        bus = EventBus()
        events: list = []
        waiting: asyncio.Queue[str] = asyncio.Queue()

        def seen(event) -> None:
            events.append(event)
            if event.type == "operator" and event.action == "status" and event.text == op.WAITING_FOR_APPROVAL:
                waiting.put_nowait(event.call_id)

        bus.subscribe(seen)
        driver = Driver(agent=agent, executor=NoTools(), task=Task(env_id="x", problem="Make files.", tools=[],
                                                                   workspace=str(workspace)),
                        bus=bus, approval=op.ApprovalPolicy.parse("Bash"), limits=Limits(max_turns=8, wall_time=240))
        run = asyncio.ensure_future(driver.run())
        try:
            first = await asyncio.wait_for(waiting.get(), 120)
            assert not (workspace / "one.txt").exists()  # held: Claude Code has not got the call
            driver.approve(first)
            second = await asyncio.wait_for(waiting.get(), 120)
            assert (workspace / "one.txt").read_text() == "one\n"
            assert not (workspace / "two.txt").exists()
            driver.edit({"command": "echo edited > two.txt", "description": "run it"}, call_id=second)
            third = await asyncio.wait_for(waiting.get(), 120)
            assert (workspace / "two.txt").read_text() == "edited\n"
            driver.reject("not in this workspace", call_id=third)
            fourth = await asyncio.wait_for(waiting.get(), 120)  # Claude Code went on to its next turn
            assert not (workspace / "three.txt").exists()
            driver.approve(fourth)
            while not _processes_with(MARKER):  # Claude Code starts the command after the reply; poll /proc for it
                assert not run.done(), f"the episode ended before the command ran: {run.result()}"
                await asyncio.sleep(0.05)
            driver.stop("enough")
            end = await run
        finally:
            if not run.done():
                driver.stop("test failed")
                await run
        requests = [r for r in fake.requests if r.protocol == "anthropic"]
    assert end.reason == "stopped"
    assert _processes_with(MARKER) == []
    # The model's fourth request shows its rejected call as it asked for it, and why it did not run.
    blocks = [b for m in requests[3].body["messages"] if isinstance(m["content"], list) for b in m["content"]]
    rejected = next(b for b in blocks if b["type"] == "tool_use" and b["id"] == third)
    assert (rejected["name"], rejected["input"]["command"]) == ("Bash", "touch three.txt")
    result = next(b for b in blocks if b["type"] == "tool_result" and b["tool_use_id"] == third)
    assert result["content"] == "The operator rejected this tool call: not in this workspace" and result["is_error"]
    # How: Claude Code was handed a stand-in call of a tool it does not have, answered it with an error and went on.
    own_log = [e.text for e in events if e.type == "service" and e.service == "claude-code"]
    assert any(f"No such tool available: {STAND_IN}" in line for line in own_log)
    results = {e.call_id: e for e in events if e.type == "tool_result"}
    assert results[third].output == result["content"]
    assert [(e.action, e.call_id) for e in events if e.type == "operator" and e.action in ("approve", "edit", "reject")] == [
        ("approve", first), ("edit", second), ("reject", third), ("approve", fourth)]
