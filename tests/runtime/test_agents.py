"""The oracle, replay and human agents on their own (no environment running)."""

from __future__ import annotations

from pathlib import Path

import pytest

from stripebench_tui.agents import BUILTIN_AGENTS, create_agent
from stripebench_tui.core.agent import AgentError, Task
from stripebench_tui.core.events import Header, ModelMessage, ToolCall
from stripebench_tui.core.trace import TraceWriter
from stripebench_tui.errors import UserError

from .helpers import FIXTURES


def _task(**context: str) -> Task:
    return Task(env_id="tiny-shop", problem="", tools=[], context={"ENV_DIR": str(FIXTURES / "tiny-shop"), **context})


def test_the_three_agents_are_registered() -> None:
    assert {"oracle", "replay", "human"} <= set(BUILTIN_AGENTS)


async def test_oracle_plays_the_plan_with_the_episode_context() -> None:
    oracle = create_agent("oracle")
    await oracle.start(_task(APP_URL="http://127.0.0.1:4242"))
    turns = [await oracle.next_turn([]) for _ in range(4)]
    assert [t.tool_calls[0].tool if t.tool_calls else None for t in turns] == ["view_file", "create_file", "shell", None]
    assert "http://127.0.0.1:4242/subscribe" in turns[2].tool_calls[0].arguments["command"]
    assert "metadata" in turns[1].tool_calls[0].arguments["content"]
    assert turns[-1].done and [c.call_id for t in turns for c in t.tool_calls] == ["oracle-1", "oracle-2", "oracle-3"]


async def test_oracle_mutant_and_plan_errors() -> None:
    mutant = create_agent("oracle", plan="no-metadata")
    await mutant.start(_task(APP_URL="http://x"))
    await mutant.next_turn([])
    assert "metadata" not in (await mutant.next_turn([])).tool_calls[0].arguments["content"]
    with pytest.raises(AgentError, match="no mutant 'typo'.*no-metadata"):
        await create_agent("oracle", plan="typo").start(_task())
    undefined = create_agent("oracle")
    await undefined.start(_task())  # no APP_URL in this context
    await undefined.next_turn([])
    await undefined.next_turn([])
    with pytest.raises(AgentError, match="APP_URL"):
        await undefined.next_turn([])


async def test_replay_agent_repeats_agent_calls_only(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    header = Header(env="tiny-shop", extra={"variables": {"APP_URL": "http://127.0.0.1:1111", "APP_PORT": "1111"}})
    with TraceWriter(path, header) as w:
        w.write(ModelMessage(turn=1, text="look"))
        w.write(ToolCall(turn=1, call_id="a", tool="view_file", arguments={"path": "app.py"}))
        w.write(ToolCall(turn=1, call_id="c", tool="shell", arguments={"command": "curl http://127.0.0.1:1111/x"}))
        w.write(ToolCall(turn=2, call_id="op-1", tool="shell", arguments={"command": "ls"}, actor="operator"))
        w.write(ToolCall(turn=3, call_id="b", tool="shell", arguments={"command": "true"}))
    agent = create_agent("replay", trace=str(path))
    await agent.start(_task(APP_URL="http://127.0.0.1:2222", APP_PORT="2222"))
    first, second, last = [await agent.next_turn([]) for _ in range(3)]
    assert first.text == "look"
    assert [(c.tool, c.arguments) for c in first.tool_calls] == [
        ("view_file", {"path": "app.py"}), ("shell", {"command": "curl http://127.0.0.1:2222/x"})]
    assert [c.call_id for c in second.tool_calls] == ["b"]
    assert last.done and not last.tool_calls
    with pytest.raises(UserError, match="needs a trace"):
        create_agent("replay")
    with pytest.raises(UserError, match="no such trace"):
        create_agent("replay", trace=str(tmp_path / "missing.jsonl"))


async def test_human_agent_lines() -> None:
    human = create_agent("human")
    human.parse_line('shell {"command": "ls"}')
    human.parse_line("say hello there")
    human.parse_line("")
    with pytest.raises(UserError, match="not JSON"):
        human.parse_line("shell {oops")
    with pytest.raises(UserError, match="JSON object"):
        human.parse_line("shell [1]")
    human.parse_line("done bye")
    call, said, done = [await human.next_turn([]) for _ in range(3)]
    assert call.tool_calls[0].tool == "shell" and call.tool_calls[0].arguments == {"command": "ls"}
    assert said.text == "hello there" and not said.tool_calls
    assert done.done and done.text == "bye"
    assert human.queue.empty()
