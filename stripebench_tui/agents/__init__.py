"""Agents by name: the built-in ones plus any a third-party package registers.

A factory is any callable taking keyword options and returning an object that
follows ``stripebench_tui.core.agent.Agent``. Built-ins are listed here as
"module:attribute" strings so that naming an agent imports only its own module
(``noop`` never pulls in an LLM SDK). Another package adds an agent through the
entry-point group ``stripebench.agents``, e.g. in its pyproject.toml::

    [project.entry-points."stripebench.agents"]
    mine = "my_package.agent:MyAgent"

Every factory must accept (and may ignore) ``on_retry`` so that a driver can pass
one callback to whichever agent the user picked.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

from stripebench_tui.core.agent import Agent
from stripebench_tui.errors import UserError

ENTRY_POINT_GROUP = "stripebench.agents"

# name -> "module:attribute". Add a built-in with one line here.
BUILTIN_AGENTS: dict[str, str] = {
    "noop": "stripebench_tui.agents.noop:NoopAgent",
    "anthropic": "stripebench_tui.agents.anthropic:AnthropicAgent",
    "openai": "stripebench_tui.agents.openai_compat:OpenAICompatAgent",
    "oracle": "stripebench_tui.agents.oracle:OracleAgent",
    "replay": "stripebench_tui.agents.replay_agent:ReplayAgent",
    "human": "stripebench_tui.agents.human:HumanAgent",
    # external harnesses, run as processes behind the model gateway (harness.external, harness.harnesses)
    "claude-code": "stripebench_tui.harness.harnesses:claude_code",
    "codex": "stripebench_tui.harness.harnesses:codex",
    "mini-swe-agent": "stripebench_tui.harness.harnesses:mini_swe_agent",
    "command": "stripebench_tui.harness.harnesses:command_agent",
}

AgentFactory = Callable[..., Agent]


def _third_party() -> dict[str, Any]:
    """Entry points of the agent group; built-in names cannot be taken over."""
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name not in BUILTIN_AGENTS}


def agent_names() -> list[str]:
    """Every agent name that ``create_agent`` accepts, sorted."""
    return sorted({*BUILTIN_AGENTS, *_third_party()})


def _load(target: str) -> AgentFactory:
    module_name, _, attr = target.partition(":")
    return getattr(importlib.import_module(module_name), attr)


def agent_factory(name: str) -> AgentFactory:
    """The factory registered under ``name``; UserError listing the known names otherwise."""
    if name in BUILTIN_AGENTS:
        return _load(BUILTIN_AGENTS[name])
    third = _third_party()
    if name in third:
        return third[name].load()
    raise UserError(f"unknown agent {name!r}; known agents: {', '.join(agent_names())}")


def describe_agent(name: str) -> str:
    """First line of the agent factory's docstring, for listings and --help."""
    doc = (agent_factory(name).__doc__ or "").strip()
    return doc.splitlines()[0] if doc else ""


def create_agent(name: str, **options: Any) -> Agent:
    """Build the agent registered under ``name`` with its options (model, base_url, on_retry, …)."""
    return agent_factory(name)(**options)
