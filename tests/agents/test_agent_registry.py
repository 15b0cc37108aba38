"""The agent registry: built-ins by name, third-party agents through entry points, clear errors."""

from __future__ import annotations

from importlib.metadata import EntryPoint

import pytest

import stripebench_tui.agents as registry
from stripebench_tui.agents import agent_names, create_agent, describe_agent
from stripebench_tui.core.agent import Agent, Task
from stripebench_tui.errors import UserError


def test_builtins_are_listed():
    assert {"noop", "anthropic", "openai"} <= set(agent_names())


def test_unknown_agent_is_a_user_error_listing_the_known_ones():
    with pytest.raises(UserError) as caught:
        create_agent("gpt-9000")
    message = str(caught.value)
    assert "'gpt-9000'" in message
    for name in ("noop", "anthropic", "openai"):
        assert name in message


async def test_noop_ends_at_once():
    agent = create_agent("noop", model="ignored", on_retry=print)
    assert isinstance(agent, Agent) and agent.name == "noop"
    await agent.start(Task(env_id="demo", problem="Do it.", tools=[]))
    turn = await agent.next_turn([])
    assert turn.done and turn.tool_calls == [] and turn.text
    await agent.close()


def test_describe_agent_uses_the_factory_docstring():
    assert "Anthropic" in describe_agent("anthropic")
    assert "baseline" in describe_agent("noop")


class PluginAgent:
    """A third-party agent."""

    name = "plugin"

    def __init__(self, **options):
        self.options = options


def test_third_party_agents_plug_in_through_entry_points(monkeypatch):
    plugin = EntryPoint(name="plugin", value=f"{__name__}:PluginAgent", group=registry.ENTRY_POINT_GROUP)
    hijack = EntryPoint(name="noop", value=f"{__name__}:PluginAgent", group=registry.ENTRY_POINT_GROUP)
    monkeypatch.setattr(registry, "entry_points", lambda group: [plugin, hijack] if group == registry.ENTRY_POINT_GROUP else [])
    assert "plugin" in agent_names()
    agent = create_agent("plugin", model="m")
    assert isinstance(agent, PluginAgent) and agent.options == {"model": "m"}
    assert type(create_agent("noop")).__name__ == "NoopAgent"  # a plugin cannot take over a built-in name
