"""Fixtures for the agent tests: a task with tools, the fake model server, agents pointed at it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from stripebench_tui.agents import create_agent
from stripebench_tui.core.agent import Task
from stripebench_tui.core.tool_types import ToolSpec
from stripebench_tui.testing.fake_models import FakeModelServer, Fault
from stripebench_tui.testing.fake_wire import ScriptedTurn

# Model names the price table knows, so cost can be checked.
MODELS = {"anthropic": "claude-sonnet-5-5", "openai": "gpt-4o"}

# Retries fast enough for tests, still exponential.
FAST_RETRIES = {"backoff_base": 0.01, "backoff_max": 0.05}


@pytest.fixture
def task() -> Task:
    shell = ToolSpec(
        "shell",
        "Run a shell command in the workspace.",
        {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
        server="shell",
    )
    view = ToolSpec(
        "view_file",
        "Show a file.",
        {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        server="files",
    )
    return Task(env_id="demo", problem="Add a Stripe Checkout button to the shop.", tools=[shell, view], workspace="/tmp/ws")


@pytest.fixture
def fake_server() -> Callable[..., FakeModelServer]:
    """Start fake model servers; every one is stopped at teardown."""
    started: list[FakeModelServer] = []

    def start(turns: list[ScriptedTurn], faults: list[Fault] | None = None, api_key: str | None = None,
              **settings: Any) -> FakeModelServer:
        server = FakeModelServer(turns, faults, api_key, **settings).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def base_url(protocol: str, fake: FakeModelServer) -> str:
    return fake.url if protocol == "anthropic" else fake.openai_base_url


@pytest.fixture
async def agent_for(task: Task) -> Callable[..., Any]:
    """Build and start an agent of the given protocol against a fake; closed at teardown."""
    agents: list[Any] = []

    async def make(protocol: str, fake: FakeModelServer | None = None, **options: Any) -> Any:
        settings: dict[str, Any] = {"api_key": "sk-test-fake", "model": MODELS[protocol], **FAST_RETRIES}
        if fake is not None:
            settings["base_url"] = base_url(protocol, fake)
        settings.update(options)
        agent = create_agent(protocol, **settings)
        await agent.start(task)
        agents.append(agent)
        return agent

    yield make
    for agent in agents:
        await agent.close()
