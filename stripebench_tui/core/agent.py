"""The small protocol between the episode driver and an agent.

The driver owns the tools (MCP clients) and the event log; an agent only sees
the task, the tool list and what its previous tool calls returned, and answers
each turn with text and/or tool calls. Concrete agents live in
``stripebench_tui.agents`` (one module each); nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from stripebench_tui.core.tool_types import ToolOutcome, ToolSpec


@dataclass
class Task:
    """What an agent is asked to do in an episode."""

    env_id: str
    problem: str  # the environment's PROBLEM.md, with placeholders filled in
    tools: list[ToolSpec]
    workspace: str = ""  # path of the episode workspace, for agents that plan file paths
    hints: list[str] = field(default_factory=list)  # offered to the operator, not to the agent
    context: dict[str, Any] = field(default_factory=dict)  # URLs, ports etc. an oracle plan may refer to
    # Set by the driver: a line for the agent's own log pane (text, stream), e.g. an external harness's output.
    log: Callable[[str, str], None] | None = None
    # Set by the driver when some calls wait for the operator: which tools do (for agents that must hold them).
    needs_approval: Callable[[str], bool] | None = None


@dataclass
class ToolRequest:
    """One tool call the agent wants made."""

    call_id: str
    tool: str
    arguments: dict[str, Any]


@dataclass
class Observation:
    """Something the agent gets to see before its next turn."""

    kind: str  # "tool_result" | "operator_message" | "rejected"
    text: str
    call_id: str = ""
    tool: str = ""
    is_error: bool = False


@dataclass
class AgentTurn:
    """An agent's answer for one turn. ``done`` with no tool calls ends the episode."""

    text: str = ""
    reasoning: str = ""
    tool_calls: list[ToolRequest] = field(default_factory=list)
    done: bool = False
    model: str = ""
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None
    ttft: float | None = None  # seconds to the first token, when the reply was streamed
    latency: float | None = None  # seconds for the whole reply
    # The agent's own harness runs these calls (an external agent seen through the model gateway): the driver
    # records them and waits for ``ObservingAgent.observed_result`` instead of running them itself.
    observed: bool = False


class AgentError(Exception):
    """The agent cannot go on (provider unreachable after retries, bad key, …); ends the episode."""


@runtime_checkable
class Agent(Protocol):
    """What the driver needs from an agent.

    An agent holding credentials (an LLM agent's provider key) also lists them as ``secrets`` (a list of strings):
    the runtime registers them for redaction in the trace, the logs and what is shown.
    """

    name: str

    async def start(self, task: Task) -> None:
        """Receive the task before the first turn."""

    async def next_turn(self, observations: list[Observation]) -> AgentTurn:
        """Results of the previous turn's calls (and operator messages) in, the next turn out."""

    async def close(self) -> None:
        """Release connections; called once, also when the episode is stopped early."""


@runtime_checkable
class ObservingAgent(Protocol):
    """An agent whose tool calls are run by its own harness; the driver only observes them."""

    async def observed_result(self, call_id: str) -> ToolOutcome:
        """The result the harness sent back for ``call_id`` (waits for it); an error outcome if none ever comes."""
