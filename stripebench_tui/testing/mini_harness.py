"""A tiny external agent harness for tests: its own loop and its own tools, talking to a model through an SDK.

    python -m stripebench_tui.testing.mini_harness --protocol anthropic|openai "TASK"

It reads the base URL and key from the provider's usual variables (as real
harnesses do), offers two tools (``shell``: run a command in the current
directory; ``write_file``: write a file), runs the calls the model asks for
itself and sends the results back, resending the whole history each turn, until
the model answers without tool calls. It prints one line per step. With
``--hang-after N`` it sleeps forever after N turns (for stop tests), in a child
process of its own (to check that the whole process group is ended).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageFunctionToolCall

SCHEMA = {
    "shell": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
    "write_file": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                   "required": ["path", "content"]},
}


def run_tool(name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
    if name == "shell":
        done = subprocess.run(arguments.get("command", ""), shell=True, capture_output=True, text=True, timeout=60)
        return (done.stdout + done.stderr).strip() or f"(exit {done.returncode})", done.returncode != 0
    if name == "write_file":
        Path(arguments["path"]).write_text(arguments["content"])
        return f"wrote {arguments['path']}", False
    return f"unknown tool {name}", True


def anthropic_loop(task: str, hang_after: int | None) -> None:
    # only the chosen protocol's SDK (anthropic alone takes seconds to import)
    import anthropic

    client = anthropic.Anthropic(max_retries=2)
    tools: list[Any] = [{"name": n, "description": n, "input_schema": s} for n, s in SCHEMA.items()]  # the SDK's dicts
    messages: list[Any] = [{"role": "user", "content": task}]
    for turn in range(1, 100):
        with client.messages.stream(model="claude-sonnet-5-5", max_tokens=1024, messages=messages, tools=tools) as s:
            reply = s.get_final_message()
        print(f"turn {turn}: {len(reply.content)} blocks, stop {reply.stop_reason}", flush=True)
        messages.append({"role": "assistant", "content": [b.model_dump(mode="json", exclude_none=True) for b in reply.content]})
        calls = [b for b in reply.content if b.type == "tool_use"]
        if not calls:
            return
        results = []
        for call in calls:
            output, failed = run_tool(call.name, dict(call.input))
            results.append({"type": "tool_result", "tool_use_id": call.id, "content": output, "is_error": failed})
        messages.append({"role": "user", "content": results})
        if hang_after is not None and turn >= hang_after:
            hang()


def openai_loop(task: str, hang_after: int | None) -> None:
    # only the chosen protocol's SDK, as for anthropic_loop
    import openai

    client = openai.OpenAI(max_retries=2)
    tools: list[Any] = [{"type": "function", "function": {"name": n, "parameters": s}} for n, s in SCHEMA.items()]
    messages: list[Any] = [{"role": "user", "content": task}]
    for turn in range(1, 100):
        reply = client.chat.completions.create(model="gpt-4o", messages=messages, tools=tools)
        message = reply.choices[0].message
        print(f"turn {turn}: {len(message.tool_calls or [])} calls", flush=True)
        messages.append(message.model_dump(mode="json", exclude_none=True))
        if not message.tool_calls:
            return
        for call in cast("list[ChatCompletionMessageFunctionToolCall]", message.tool_calls):  # the tools are functions
            output, _failed = run_tool(call.function.name, json.loads(call.function.arguments or "{}"))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": output})
        if hang_after is not None and turn >= hang_after:
            hang()


def hang() -> None:
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])  # a child in our process group
    print("hanging", flush=True)
    time.sleep(600)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("task")
    parser.add_argument("--protocol", choices=("anthropic", "openai"), default="anthropic")
    parser.add_argument("--hang-after", type=int, default=None)
    args = parser.parse_args()
    (anthropic_loop if args.protocol == "anthropic" else openai_loop)(args.task, args.hang_after)
    print("done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
