"""What the LLM agents tell the model: the system prompt, tool names on the wire, observation texts."""

from __future__ import annotations

import re

from stripebench_tui.core.agent import Observation, Task
from stripebench_tui.core.tool_types import ToolSpec

FIRST_USER_MESSAGE = "Start working on the task now."
CONTINUE_MESSAGE = "Continue. When the task is complete, reply without tool calls."

_HOW_TO_WORK = """\
How to work:
- Use the tools you are given to read and change files in the workspace, run commands, \
use the browser and search the Stripe documentation. Make the tool calls yourself; \
do not describe calls you would make.
- Check your work as you go: run the app, its tests, or look at the Stripe objects you created.
- The operator watching this episode may send you messages; follow them.
- When the task is complete, reply with a short summary of what you did and make no tool calls. \
That reply ends the episode."""


def system_prompt(task: Task) -> str:
    """The task's PROBLEM.md text plus how to work and how to finish."""
    where = f"You are working in the workspace at {task.workspace}.\n\n" if task.workspace else ""
    return f"{where}# The task\n\n{task.problem.strip()}\n\n{_HOW_TO_WORK}\n"


_BAD_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]")
_MAX_NAME = 64  # the tightest limit among the providers we speak to


def wire_tool_names(tools: list[ToolSpec]) -> dict[str, str]:
    """Map each tool to a name the providers accept (letters, digits, _ and -, ≤64), unique; wire name -> tool name."""
    mapping: dict[str, str] = {}
    for tool in tools:
        base = _BAD_NAME_CHARS.sub("_", tool.name)[:_MAX_NAME] or "tool"
        wire, n = base, 1
        while wire in mapping:
            n += 1
            suffix = f"_{n}"
            wire = base[: _MAX_NAME - len(suffix)] + suffix
        mapping[wire] = tool.name
    return mapping


def object_schema(schema: dict) -> dict:
    """A tool's input schema as the providers need it: always a JSON object schema."""
    if not schema:
        return {"type": "object", "properties": {}}
    if "type" not in schema:
        return {"type": "object", **schema}
    return schema


def result_text(obs: Observation) -> str:
    """The text a model sees for a tool result or a rejected call."""
    if obs.kind == "rejected":
        why = obs.text.strip()
        return "The operator rejected this tool call; it was not run." + (f" Reason: {why}" if why else "")
    return obs.text if obs.text else "(no output)"


def operator_text(obs: Observation) -> str:
    """An operator message as the model sees it."""
    return f"Message from the operator: {obs.text}"


NOT_RUN_TEXT = "No result: this tool call was not run."
