"""Both LLM agents stream their replies through the real SDKs: time to first token and latency, and broken streams.

The fake model server holds a streamed reply just before and just after its first token; the agent reads an
injected clock that the test moves only while the reply is held, so the figures say where each was taken.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from stripebench_tui.core.agent import AgentError, Observation
from stripebench_tui.testing.fake_models import Fault
from stripebench_tui.testing.fake_wire import ScriptedCall, ScriptedTurn

PROTOCOLS = ["anthropic", "openai"]


class StepClock:
    """A clock that stands still until the test moves it; ``read`` is set whenever the agent reads it."""

    def __init__(self) -> None:
        self.now = 0.0
        self.read = asyncio.Event()

    def __call__(self) -> float:
        self.read.set()
        return self.now

    def move_to(self, now: float) -> None:
        self.now = now
        self.read.clear()


async def reached(gate: Any) -> None:
    assert await asyncio.to_thread(gate.reached.wait, 10), "the fake server never got to the gate"


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_ttft_is_taken_at_the_first_token_and_latency_at_the_end(protocol, fake_server, agent_for):
    fake = fake_server([ScriptedTurn("Looking around.", [ScriptedCall("shell", {"command": "ls"})],
                                     reasoning="First the files.")])
    hold = fake.hold_next_stream()
    clock = StepClock()
    agent = await agent_for(protocol, fake, clock=clock)
    turn_task = asyncio.create_task(agent.next_turn([]))

    await reached(hold.before)  # headers and the stream's opening events are out; no token yet
    clock.move_to(2.0)
    hold.before.open()
    await reached(hold.after)  # the first token is out; the rest waits
    await asyncio.wait_for(clock.read.wait(), 10)  # the agent noted the first token
    clock.move_to(7.0)
    hold.after.open()
    turn = await asyncio.wait_for(turn_task, 10)

    assert (turn.ttft, turn.latency) == (2.0, 7.0)
    # The whole reply was assembled from the stream as before: text, reasoning, the tool call, usage.
    assert turn.text == "Looking around." and turn.reasoning == "First the files."
    assert [(c.tool, c.arguments) for c in turn.tool_calls] == [("shell", {"command": "ls"})]
    assert turn.tokens_in and turn.tokens_out and turn.cost_usd
    (request,) = fake.requests
    assert request.streamed and request.body["stream"] is True
    if protocol == "openai":
        assert request.body["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_every_turn_is_timed_on_the_real_clock(protocol, fake_server, agent_for):
    fake = fake_server([ScriptedTurn("One.", [ScriptedCall("shell", {"command": "ls"})]), ScriptedTurn("Done.")])
    agent = await agent_for(protocol, fake)
    first = await agent.next_turn([])
    second = await agent.next_turn([Observation("tool_result", "app.py", first.tool_calls[0].call_id, "shell")])
    for turn in (first, second):
        assert turn.ttft is not None and turn.latency is not None and 0 <= turn.ttft <= turn.latency


@pytest.mark.parametrize("cut_as", ["drop", "end", "error"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_stream_broken_midway_is_retried(protocol, cut_as, fake_server, agent_for):
    fake = fake_server([ScriptedTurn("Cut short, this one.", [ScriptedCall("shell", {"command": "ls"})]),
                        ScriptedTurn("The whole reply.")],
                       faults=[Fault(cut_after=3, cut_as=cut_as, message="model overloaded")])
    retries: list[Any] = []
    agent = await agent_for(protocol, fake, on_retry=lambda attempt, error, delay: retries.append(error))
    turn = await agent.next_turn([])
    assert turn.text == "The whole reply." and turn.done and turn.tool_calls == []
    assert len(retries) == 1 and [r.streamed for r in fake.requests] == [True, True]
    assert turn.latency is not None  # the try that answered


@pytest.mark.parametrize(("cut_as", "reason", "tries"), [
    ("drop", "cut off (", 2),  # like a refused connection: network tries
    ("end", "the response stream ended before the reply was complete", 2),
    ("error", "error in the response stream: model overloaded", 3),  # like a 5xx: max tries
])
@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_stream_broken_every_time_is_one_line_after_bounded_tries(protocol, cut_as, reason, tries, fake_server,
                                                                          agent_for):
    fake = fake_server([ScriptedTurn("never whole")] * 5,
                       faults=[Fault(cut_after=2, cut_as=cut_as, count=-1, message="model overloaded")])
    agent = await agent_for(protocol, fake, max_tries=3, network_tries=2)
    with pytest.raises(AgentError) as caught:
        await agent.next_turn([])
    message = str(caught.value)
    assert f"gave up after {tries} tries" in message and reason in message and "\n" not in message
    assert "cannot connect" not in message and "HTTP 200" not in message
    assert len(fake.requests) == tries


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_stream_that_stalls_times_out_and_is_retried(protocol, fake_server, agent_for):
    fake = fake_server([ScriptedTurn("Stalled."), ScriptedTurn("Recovered.")])
    fake.hold_next_stream()  # never opened: the first reply stops before its first token
    retries: list[Any] = []
    agent = await agent_for(protocol, fake, timeout=0.5, on_retry=lambda a, e, d: retries.append(e))
    turn = await agent.next_turn([])
    assert turn.text == "Recovered." and len(retries) == 1 and len(fake.requests) == 2


@pytest.mark.parametrize("index", ["openai", "missing", "reused"])
async def test_openai_compatible_servers_tool_call_indexes(index, fake_server, agent_for):
    """OpenAI numbers a reply's streamed tool calls; some servers leave the index out, Ollama sends 0 for each."""
    fake = fake_server([ScriptedTurn("Two at once.", [ScriptedCall("shell", {"command": "ls -la"}),
                                                      ScriptedCall("view_file", {"path": "app/main.py"})],
                                     reasoning="Both are needed."),
                        ScriptedTurn("Done.")], chat_tool_index=index)
    agent = await agent_for("openai", fake)
    turn = await agent.next_turn([])
    sent = fake.answered()[0].reply["choices"][0]["message"]["tool_calls"]
    assert [(c.call_id, c.tool, c.arguments) for c in turn.tool_calls] == [
        (sent[0]["id"], "shell", {"command": "ls -la"}), (sent[1]["id"], "view_file", {"path": "app/main.py"})]
    assert turn.reasoning == "Both are needed." and turn.text == "Two at once." and not turn.done
    done = await agent.next_turn([Observation("tool_result", "ok", c.call_id, c.tool) for c in turn.tool_calls])
    assert done.done  # the fake checked that the history holds both calls, each answered
