"""Approve / edit / reject of an external harness's calls, played by the real driver (the in-repo mini harness).

The approval policy holds the harness's ``shell`` calls at the gateway: a held
command has not run (its file is not there) until the operator decides; an edit
changes what runs; a rejected call does not run, the harness goes on, and the
model's next request shows its call and why it was rejected. Pause, inject and
stop keep working alongside.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from stripebench_tui.core import operator as op
from stripebench_tui.core.operator import ApprovalPolicy
from stripebench_tui.core.state import REJECTED, Reducer
from stripebench_tui.testing.fake_wire import ScriptedCall, ScriptedTurn
from tests.gateway.test_external_agent import HARNESS, _group_alive, episode  # noqa: F401  (fixture)

pytestmark = pytest.mark.slow


def script() -> list[ScriptedTurn]:
    return [
        ScriptedTurn(text="Write it.", tool_calls=[ScriptedCall("write_file",
                                                                {"path": "{workspace}/hello.txt", "content": "hi"})]),
        ScriptedTurn(text="First.", tool_calls=[ScriptedCall("shell", {"command": "echo first > first.txt"})]),
        ScriptedTurn(text="Second.", tool_calls=[ScriptedCall("shell", {"command": "echo original > second.txt"})]),
        ScriptedTurn(text="Third.", tool_calls=[ScriptedCall("shell", {"command": "touch third.txt"})]),
        ScriptedTurn(text="Finished."),
    ]


def waiting_calls(ep) -> asyncio.Queue:
    """Call ids as the driver starts waiting for approval of each."""
    queue: asyncio.Queue[str] = asyncio.Queue()
    ep.bus.subscribe(lambda e: queue.put_nowait(e.call_id) if e.type == "operator" and e.action == "status"
                     and e.text == op.WAITING_FOR_APPROVAL else None, name="waiting")
    return queue


def history(protocol: str, body: dict) -> list[tuple[str, str]]:
    """(shell command, result) pairs of a request's history."""
    if protocol == "anthropic":
        blocks = [b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]]
        commands = {b["id"]: b["input"].get("command") for b in blocks if b["type"] == "tool_use"}
        return [(commands[b["tool_use_id"]], b["content"]) for b in blocks if b["type"] == "tool_result"]
    calls = {c["id"]: json.loads(c["function"]["arguments"]).get("command")
             for m in body["messages"] for c in m.get("tool_calls") or []}
    return [(calls[m["tool_call_id"]], m["content"]) for m in body["messages"] if m["role"] == "tool"]


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
async def test_held_calls_wait_for_approve_edit_and_reject_and_the_harness_goes_on(
        episode, protocol: str) -> None:  # noqa: F811 - pytest fixtures imported above, requested by name
    ep = episode(script(), f"{HARNESS} --protocol {protocol} {{problem}}", protocol, approval=ApprovalPolicy.parse("shell"),
                 start_paused=True)
    waiting = waiting_calls(ep)
    run = asyncio.ensure_future(ep.driver.run())
    await ep.agent.wait_held(1)
    ep.driver.inject("Use port 4242.")  # inject and resume still act on the held request
    ep.driver.resume()

    first = await waiting.get()
    assert not (ep.workspace / "first.txt").exists()  # held at the gateway: the harness has not got the call
    assert (ep.workspace / "hello.txt").read_text() == "hi"  # the unheld call before it ran
    paused = asyncio.Event()
    ep.driver.on_status.append(lambda status: paused.set() if status == op.PAUSED else None)
    ep.driver.pause()  # while waiting: the turn ends once decided, then the episode pauses
    ep.driver.approve(first)
    await paused.wait()
    await ep.agent.wait_held(1)
    assert (ep.workspace / "first.txt").read_text() == "first\n"
    assert len(ep.fake.requests) == 2  # the third request waits at the gateway while paused
    ep.driver.resume()

    second = await waiting.get()
    assert not (ep.workspace / "second.txt").exists()
    ep.driver.edit({"command": "echo edited > second.txt"}, call_id=second)
    third = await waiting.get()
    assert (ep.workspace / "second.txt").read_text() == "edited\n"
    ep.driver.reject("not now", call_id=third)
    end = await run
    await ep.bus.drain()

    assert end.reason == "agent_done", end.error
    assert not (ep.workspace / "third.txt").exists()
    note = ep.fake.requests[0].body["messages"][-1]["content"]
    assert (note if protocol == "openai" else note[-1]["text"]) == "Use port 4242."
    # The model saw the edited command run, and its rejected call as it asked for it, with the reason.
    assert history(protocol, ep.fake.requests[4].body)[1:] == [
        ("echo first > first.txt", "(exit 0)"),
        ("echo edited > second.txt", "(exit 0)"), ("touch third.txt", "The operator rejected this tool call: not now")]
    actions = [(o.action, o.call_id) for o in ep.of("operator") if o.action in ("approve", "edit", "reject")]
    assert actions == [("approve", first), ("edit", second), ("reject", third)]
    results = {r.call_id: r for r in ep.of("tool_result")}
    assert results[third].output == "The operator rejected this tool call: not now" and results[third].is_error
    assert len(ep.of("tool_result")) == 4  # one per call: the harness's answer to the stand-in is not recorded
    state = Reducer().apply_all(ep.events)
    views = {c.call.call_id: c for t in state.turns for c in t.calls}
    assert views[second].call.arguments == {"command": "echo edited > second.txt"}  # the recorded call shows the edit
    assert views[third].status == REJECTED and views[third].result.output.endswith("not now")
    assert len(views) == 4


async def test_stop_while_a_call_is_held_ends_the_harness_and_the_call_never_runs(episode) -> None:  # noqa: F811 - pytest fixtures imported above, requested by name
    ep = episode(script(), f"{HARNESS} {{problem}}", approval=ApprovalPolicy.parse("shell"))
    waiting = waiting_calls(ep)
    run = asyncio.ensure_future(ep.driver.run())
    await waiting.get()
    pgid = ep.agent.process.pid
    ep.driver.stop("enough")
    end = await run
    assert end.reason == "stopped"
    assert _group_alive(pgid) == []
    assert not (ep.workspace / "first.txt").exists()
    assert ep.agent.holds.waiting == []


def test_headless_edit_takes_the_new_arguments_as_json(capsys) -> None:
    from stripebench_tui.commands.run import operator_line

    sent: list = []

    class Recorder(op.Controls):
        def send(self, command: op.Command) -> None:
            sent.append(command)

    assert operator_line(Recorder(), 'edit {"command": "echo edited"}')
    assert sent == [op.Edit(arguments={"command": "echo edited"})]
    assert operator_line(Recorder(), "edit echo edited")  # a command, but not JSON: nothing is sent, one line says why
    assert len(sent) == 1
    assert capsys.readouterr().err == 'stripebench: edit takes the new arguments as a JSON object: edit {"command": "ls"}\n'
