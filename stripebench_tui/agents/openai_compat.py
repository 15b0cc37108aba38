"""An agent that talks to any OpenAI-compatible Chat Completions endpoint (OpenAI, vLLM, Ollama, …)."""

from __future__ import annotations

import json
from typing import Any, cast

from stripebench_tui.agents.chat_stream import ChatReply
from stripebench_tui.agents.history import arguments_json
from stripebench_tui.agents.llm_base import LlmAgent, StreamTiming
from stripebench_tui.agents.pricing import OPENAI, TurnUsage, turn_cost
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
from stripebench_tui.errors import UserError

_FINISHED = {"stop", "content_filter"}
# Local servers (vLLM, Ollama) ignore the key, but the SDK insists on one.
_UNUSED_KEY = "unused"


class OpenAICompatAgent(LlmAgent):
    """A model behind an OpenAI-compatible Chat Completions API (OPENAI_API_KEY, OPENAI_BASE_URL)."""

    name = "openai"
    key_env = "OPENAI_API_KEY"
    base_url_env = "OPENAI_BASE_URL"
    model_env = "OPENAI_MODEL"
    default_model = "gpt-6.1-sol"

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._tools: list[dict[str, Any]] = []
        self._messages: list[dict[str, Any]] = []
        self._local_errors: dict[str, str] = {}  # call id -> error we answer ourselves (bad arguments)

    def _missing_key(self) -> str:
        if self.options.base_url is None:
            raise UserError(
                f"the openai agent needs an API key: set {self.key_env} (or pass api_key), "
                f"or point {self.base_url_env} at a local server"
            )
        return _UNUSED_KEY

    async def start(self, task: Task) -> None:
        """Open the client and turn the task into a system message and tool definitions."""
        # a second or more to import; `stripebench agents` loads this module only to describe the agent
        import openai

        # A stream's broken connection: wrapped by newer SDKs as a connection error, let through by older ones.
        # An error event inside a stream is the SDK's plain APIError.
        self._errors = SdkErrors(openai.APIStatusError, openai.APIConnectionError, openai.APITimeoutError,
                                 transport=http_transport_errors(), other=openai.APIError)
        self._client = openai.AsyncOpenAI(
            api_key=self.options.api_key,
            base_url=self.options.base_url,
            timeout=self.options.timeout,
            max_retries=0,  # retries are ours, so each one can be reported
        )
        self._tools = [
            {
                "type": "function",
                "function": {"name": wire, "description": spec.description, "parameters": object_schema(spec.input_schema)},
            }
            for wire, spec in self._wire_tools(task)
        ]
        self._messages = [{"role": "system", "content": system_prompt(task)}]
        self._pending = []
        self._local_errors = {}

    def _new_messages(self, observations: list[Observation]) -> list[dict[str, Any]]:
        by_id = {o.call_id: o for o in observations if o.kind in ("tool_result", "rejected") and o.call_id}
        # Every tool call of the previous reply needs its "tool" message before anything else.
        out: list[dict[str, Any]] = []
        for call_id in self._pending:
            obs = by_id.get(call_id)
            if call_id in self._local_errors:
                text = self._local_errors[call_id]
            elif obs is None:
                text = f"Error: {NOT_RUN_TEXT}"
            else:
                # Chat Completions has no error flag on tool messages; the text has to say it.
                text = f"Error: {result_text(obs)}" if obs.is_error and obs.kind != "rejected" else result_text(obs)
            out.append({"role": "tool", "tool_call_id": call_id, "content": text})
        texts = [FIRST_USER_MESSAGE] if len(self._messages) == 1 else []
        for obs in observations:
            if obs.kind == "operator_message":
                texts.append(operator_text(obs))
            elif obs.kind == "tool_result" and obs.call_id not in self._pending:  # a call the operator made
                texts.append(f"The operator ran {obs.tool}:\n{result_text(obs)}")
        if texts:
            out.append({"role": "user", "content": "\n\n".join(texts)})
        elif not out:
            out.append({"role": "user", "content": CONTINUE_MESSAGE})
        return out

    def _request(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        request: dict[str, Any] = {"model": self.options.model, "messages": messages}
        if self._tools:
            request["tools"] = self._tools
        # OpenAI's own API refuses max_tokens for its newer models; local servers know max_tokens best.
        limit_key = "max_completion_tokens" if self.options.base_url is None else "max_tokens"
        request[limit_key] = self.options.max_tokens
        if self.options.temperature is not None:
            request["temperature"] = self.options.temperature
        return request

    def _replay_turn(self, observations: list[Observation], text: str, calls: list[ToolRequest]) -> None:
        messages = self._messages + self._new_messages(observations)
        assistant: dict[str, Any] = {"role": "assistant", "content": text}
        if calls:
            assistant["tool_calls"] = [{"id": c.call_id, "type": "function", "function": {
                "name": self._wire_name(c.tool), "arguments": arguments_json(c.arguments)}} for c in calls]
        self._messages = messages + [assistant]
        self._pending, self._local_errors = [c.call_id for c in calls], {}

    async def next_turn(self, observations: list[Observation]) -> AgentTurn:
        """Send the observations, stream the model's reply (timed), hand back its tool calls."""
        messages = self._messages + self._new_messages(self._with_carried(observations))
        request = self._request(messages)
        reply, watch = await self._call(lambda client: self._streamed(client, request))
        turn, assistant = self._turn(reply)
        self._messages = messages + [assistant]
        turn.model = reply.model or self.options.model
        turn.ttft, turn.latency = watch.ttft, watch.latency
        if reply.usage is not None:
            turn.tokens_in, turn.tokens_out = reply.usage.prompt_tokens, reply.usage.completion_tokens
            # Cached prompt tokens bill at the cached-input price (servers that do not say send no details).
            cached = getattr(getattr(reply.usage, "prompt_tokens_details", None), "cached_tokens", None) or 0
            turn.cost_usd = turn_cost(turn.model, TurnUsage(turn.tokens_in, turn.tokens_out, cache_read=cached),
                                      provider=OPENAI, price=self.options.price)
        return turn

    # Any: the SDK's AsyncOpenAI, imported only when the agent runs
    async def _streamed(self, client: Any, request: dict[str, Any]) -> tuple[ChatReply, StreamTiming]:
        """One try: the reply streamed and assembled (``chat_stream``), and its timing."""
        watch, reply = StreamTiming(self.options.clock), ChatReply()
        # The usage comes in a last chunk of its own, only when asked for.
        stream = await client.chat.completions.create(**request, stream=True, stream_options={"include_usage": True})
        async with stream:
            async for chunk in stream:
                if reply.feed(chunk):
                    watch.token()
        watch.stop()
        if reply.finish_reason is None:
            raise IncompleteStream("the response stream ended before the reply was complete")
        return reply, watch

    def _turn(self, reply: ChatReply) -> tuple[AgentTurn, dict[str, Any]]:
        calls: list[ToolRequest] = []
        history_calls: list[dict[str, Any]] = []
        self._pending, self._local_errors = [], {}
        for call in reply.calls:
            self._pending.append(call.id)
            raw = call.arguments
            try:
                arguments = json.loads(raw) if raw.strip() else {}
            except json.JSONDecodeError as exc:
                arguments, problem = None, f"not valid JSON ({exc.msg} at position {exc.pos})"
            else:
                problem = "" if isinstance(arguments, dict) else "not a JSON object"
            if problem:
                self._local_errors[call.id] = (
                    f"Error: the arguments of this {call.name} call were {problem}, so it was not run. "
                    f"You sent: {raw[:500]}"
                )
                # Keep "{}" in the history: vLLM and Ollama parse past arguments and would reject the whole request.
                raw = "{}"
            else:
                calls.append(ToolRequest(call.id, self._tool_name(call.name), cast("dict[str, Any]", arguments)))
            history_calls.append({"id": call.id, "type": "function", "function": {"name": call.name, "arguments": raw}})
        assistant: dict[str, Any] = {"role": "assistant", "content": reply.text}
        if history_calls:
            assistant["tool_calls"] = history_calls
        turn = AgentTurn(
            text=reply.text or reply.refusal,
            reasoning=reply.reasoning,
            tool_calls=calls,
            done=not self._pending and reply.finish_reason in _FINISHED,
        )
        return turn, assistant
