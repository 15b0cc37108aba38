"""Plumbing the LLM agents share: options and key, tool names on the wire, retried calls and their timing, closing."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from stripebench_tui.agents.history import recorded_exchanges
from stripebench_tui.agents.options import read_options
from stripebench_tui.agents.prompting import wire_tool_names
from stripebench_tui.agents.retry import SdkErrors, call_with_retries
from stripebench_tui.core.agent import AgentError, Observation, Task, ToolRequest
from stripebench_tui.core.events import Event
from stripebench_tui.core.tool_types import ToolSpec
from stripebench_tui.errors import UserError


class StreamTiming:
    """One try of a streamed call: seconds from sending the request to its first token (``ttft``) and to its end
    (``latency``), the model gateway's measure for external harnesses. A retried call keeps its last try's."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._started = clock()
        self.ttft: float | None = None
        self.latency: float | None = None

    def token(self) -> None:
        """An event carrying output arrived (only the first one counts)."""
        if self.ttft is None:
            self.ttft = round(self._clock() - self._started, 6)

    def stop(self) -> None:
        """The stream ended."""
        self.latency = round(self._clock() - self._started, 6)


class LlmAgent:
    """Base of the provider agents; a subclass sets the class attributes and speaks its wire protocol."""

    name = ""
    key_env = ""
    base_url_env = ""
    model_env = ""
    default_model = ""

    def __init__(self, **options: Any) -> None:
        self.options = read_options(
            self.name,
            options,
            key_env=self.key_env,
            base_url_env=self.base_url_env,
            model_env=self.model_env,
            default_model=self.default_model,
        )
        self._placeholder_key = ""
        if not self.options.api_key:
            self.options.api_key = self._placeholder_key = self._missing_key()
        self._client: Any = None
        self._errors: SdkErrors | None = None
        self._names: dict[str, str] = {}  # wire name -> tool name
        self._pending: list[str] = []  # call ids of the last reply, each owed a result
        self._carried: list[Observation] = []  # a fork's last recorded results, sent with the first live request

    @property
    def secrets(self) -> list[str]:
        """Values no trace, log or export may contain: the provider key (the runtime registers them for redaction)."""
        key = self.options.api_key
        return [key] if key and key != self._placeholder_key else []

    @property
    def model(self) -> str:
        """The model asked for (a reply may name a dated snapshot of it)."""
        return self.options.model

    def _missing_key(self) -> str:
        """The key to use when none is configured; by default there is none to use."""
        raise UserError(f"the {self.name} agent needs an API key: set {self.key_env} (or pass api_key)")

    def _wire_tools(self, task: Task) -> list[tuple[str, ToolSpec]]:
        """The task's tools under names every provider accepts (remembered to map calls back)."""
        self._names = wire_tool_names(task.tools)
        specs = {tool.name: tool for tool in task.tools}
        return [(wire, specs[name]) for wire, name in self._names.items()]

    def _tool_name(self, wire: str) -> str:
        return self._names.get(wire, wire)

    def _wire_name(self, tool: str) -> str:
        return next((wire for wire, name in self._names.items() if name == tool), tool)

    def continue_from(self, events: list[Event], at_turn: int) -> None:
        """Take turns 1..``at_turn`` of a recorded episode (its events, in order) as this agent's own conversation,
        in its provider's format: each recorded answer is put in the message list as if the model had just sent it,
        after the observations it was given; turn N's results go with the first live request. Call after start."""
        exchanges, owed = recorded_exchanges(events, at_turn)
        for exchange in exchanges:
            self._replay_turn(exchange.observations, exchange.text, exchange.calls)
        self._carried = owed

    def _with_carried(self, observations: list[Observation]) -> list[Observation]:
        """The observations of a turn, after those a fork still owed (once)."""
        carried, self._carried = self._carried, []
        return [*carried, *observations]

    def _replay_turn(self, observations: list[Observation], text: str, calls: list[ToolRequest]) -> None:
        """Append one recorded exchange to the message list (each provider's format)."""
        raise NotImplementedError

    async def _call(self, call: Callable[[Any], Awaitable[Any]]) -> Any:
        """``call(client)`` with our retries."""
        client = self._client
        if client is None or self._errors is None:
            raise AgentError(f"{self.name}: next_turn called before start (or after close)")
        return await call_with_retries(lambda: call(client), self._errors, self.options.retry_policy(), self.name)

    async def close(self) -> None:
        """Close the HTTP client."""
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()
