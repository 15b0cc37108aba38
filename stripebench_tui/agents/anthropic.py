"""An agent that talks to Claude through Anthropic's Messages API with tool use."""

from __future__ import annotations

from typing import Any

from stripebench_tui.agents.llm_base import LlmAgent, StreamTiming
from stripebench_tui.agents.pricing import ANTHROPIC, TurnUsage, turn_cost
from stripebench_tui.agents.prompting import (
    CONTINUE_MESSAGE,
    FIRST_USER_MESSAGE,
    NOT_RUN_TEXT,
    object_schema,
    operator_text,
    result_text,
    system_prompt,
)
from stripebench_tui.agents.retry import IncompleteStream, SdkErrors, http_transport_errors
from stripebench_tui.core.agent import AgentTurn, Observation, Task, ToolRequest

# A reply that stops for these reasons without tool calls is the model saying it has finished.
_FINISHED = {"end_turn", "stop_sequence", "refusal"}
# Stream deltas that carry the model's output (the gateway counts the same ones as the first token).
_TOKEN_DELTAS = {"text_delta", "thinking_delta", "input_json_delta"}


# Any: a stream event of the anthropic SDK, imported only when the agent runs (its union changes across versions)
def _is_token(event: Any) -> bool:
    """Whether a Messages stream event carries output: a text, thinking or tool-input delta, or a block begun with text."""
    if event.type == "content_block_delta":
        return event.delta.type in _TOKEN_DELTAS
    if event.type == "content_block_start":
        return bool(getattr(event.content_block, "text", "") or getattr(event.content_block, "thinking", ""))
    return False


class AnthropicAgent(LlmAgent):
    """Claude via the Anthropic Messages API with tool use (key in ANTHROPIC_API_KEY)."""

    name = "anthropic"
    key_env = "ANTHROPIC_API_KEY"
    base_url_env = "ANTHROPIC_BASE_URL"
    model_env = "ANTHROPIC_MODEL"
    default_model = "claude-sonnet-5-5"

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._system = ""
        self._tools: list[dict[str, Any]] = []
        self._messages: list[dict[str, Any]] = []

    async def start(self, task: Task) -> None:
        """Open the client and turn the task into a system prompt and tool definitions."""
        # the SDK takes seconds to import; `stripebench agents` loads this module for its docstring alone
        import anthropic

        self._errors = SdkErrors(anthropic.APIStatusError, anthropic.APIConnectionError, anthropic.APITimeoutError,
                                 transport=http_transport_errors())
        self._client = anthropic.AsyncAnthropic(
            api_key=self.options.api_key,
            base_url=self.options.base_url,
            timeout=self.options.timeout,
            max_retries=0,  # retries are ours, so each one can be reported
        )
        self._system = system_prompt(task)
        self._tools = [
            {"name": wire, "description": spec.description, "input_schema": object_schema(spec.input_schema)}
            for wire, spec in self._wire_tools(task)
        ]
        self._messages = []
        self._pending = []

    def _user_blocks(self, observations: list[Observation]) -> list[dict[str, Any]]:
        by_id = {o.call_id: o for o in observations if o.kind in ("tool_result", "rejected") and o.call_id}
        # The API wants a tool_result for every tool_use of the previous reply, first in the message.
        blocks: list[dict[str, Any]] = []
        for call_id in self._pending:
            obs = by_id.get(call_id)
            blocks.append(
                {
                    "type": "tool_result",
                    "tool_use_id": call_id,
                    "content": NOT_RUN_TEXT if obs is None else result_text(obs),
                    "is_error": True if obs is None else (obs.is_error or obs.kind == "rejected"),
                }
            )
        if not self._messages:
            blocks.append({"type": "text", "text": FIRST_USER_MESSAGE})
        for obs in observations:
            if obs.kind == "operator_message":
                blocks.append({"type": "text", "text": operator_text(obs)})
            elif obs.kind == "tool_result" and obs.call_id not in self._pending:  # a call the operator made
                blocks.append({"type": "text", "text": f"The operator ran {obs.tool}:\n{result_text(obs)}"})
        if not blocks:
            blocks.append({"type": "text", "text": CONTINUE_MESSAGE})
        return blocks

    def _request_messages(self, observations: list[Observation]) -> list[dict[str, Any]]:
        blocks = self._user_blocks(observations)
        messages = list(self._messages)
        if messages and messages[-1]["role"] == "user":  # the last reply was empty and not kept
            messages[-1] = {"role": "user", "content": messages[-1]["content"] + blocks}
        else:
            messages.append({"role": "user", "content": blocks})
        return messages

    def _replay_turn(self, observations: list[Observation], text: str, calls: list[ToolRequest]) -> None:
        messages = self._request_messages(observations)
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        content += [{"type": "tool_use", "id": c.call_id, "name": self._wire_name(c.tool), "input": c.arguments}
                    for c in calls]
        self._messages = messages + ([{"role": "assistant", "content": content}] if content else [])
        self._pending = [c.call_id for c in calls]

    async def next_turn(self, observations: list[Observation]) -> AgentTurn:
        """Send the observations, stream the model's reply (timed), hand back its tool calls."""
        messages = self._request_messages(self._with_carried(observations))
        request: dict[str, Any] = {
            "model": self.options.model,
            "max_tokens": self.options.max_tokens,
            "system": self._system,
            "messages": messages,
        }
        if self._tools:
            request["tools"] = self._tools
        if self.options.temperature is not None:
            request["temperature"] = self.options.temperature
        reply, watch = await self._call(lambda client: self._streamed(client, request))
        content = [block.model_dump(mode="json", exclude_none=True) for block in reply.content]
        self._messages = messages + ([{"role": "assistant", "content": content}] if content else [])
        turn = self._turn(reply)
        turn.ttft, turn.latency = watch.ttft, watch.latency
        return turn

    # Any: the SDK's AsyncAnthropic, imported only when the agent runs
    async def _streamed(self, client: Any, request: dict[str, Any]) -> tuple[Any, StreamTiming]:
        """One try: the reply streamed (the SDK's helper assembles it), and its timing."""
        watch = StreamTiming(self.options.clock)
        async with client.messages.stream(**request) as stream:
            async for event in stream:
                if _is_token(event):
                    watch.token()
            watch.stop()
            reply = await stream.get_final_message()
        if reply.stop_reason is None:  # message_delta brings it: the stream stopped short
            raise IncompleteStream("the response stream ended before the reply was complete")
        return reply, watch

    # Any: the SDK's final Message, imported only when the agent runs
    def _turn(self, reply: Any) -> AgentTurn:
        texts, thoughts, calls = [], [], []
        for block in reply.content:
            if block.type == "text":
                texts.append(block.text)
            elif block.type == "thinking":
                thoughts.append(block.thinking)
            elif block.type == "tool_use":
                calls.append(ToolRequest(block.id, self._tool_name(block.name), dict(block.input or {})))
        self._pending = [call.call_id for call in calls]
        usage = reply.usage
        cache_write = usage.cache_creation_input_tokens or 0
        cache_read = usage.cache_read_input_tokens or 0
        tokens_in = usage.input_tokens + cache_write + cache_read
        model = reply.model or self.options.model
        return AgentTurn(
            text="\n\n".join(texts),
            reasoning="\n\n".join(thoughts),
            tool_calls=calls,
            done=not calls and reply.stop_reason in _FINISHED,
            model=model,
            tokens_in=tokens_in,
            tokens_out=usage.output_tokens,
            cost_usd=turn_cost(model, TurnUsage(tokens_in, usage.output_tokens, cache_write, cache_read),
                               provider=ANTHROPIC, price=self.options.price),
        )
