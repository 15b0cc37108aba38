"""Tool-call plans: the oracle's solution and the mutants, played as real tool calls.

A plan is a TOML file of ``[[step]]`` tables, one turn each::

    [[step]]
    say = "Let me read the server first."      # the turn's model message
    tool = "view_file"                          # a tool name from the episode's MCP servers
    args = { path = "server.py" }

    [[step]]
    say = "Write the new checkout route."
    tool = "create_file"
    args = { path = "server.py" }
    files = { content = "solution/server.py" }  # argument read from a file beside the plan's environment

    [[step]]
    say = "Done: the Checkout Session id is in submission.txt."
    done = true

``${NAME}`` in ``say`` and string arguments expands from the episode's context
(APP_URL, STRIPE_API_BASE, …); ``$${`` is a literal ``${``. An unknown name is
an error when the step is played, not silently left in.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stripebench_tui.core.json_value import JSONValue
from stripebench_tui.errors import BadFileError

_VAR = re.compile(r"\$(\$)?\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class PlanStep:
    say: str = ""
    tool: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    done: bool = False


class PlanError(BadFileError):
    """A plan file that cannot be read or a step that cannot be played."""


def expand(value: JSONValue, context: Mapping[str, str]) -> Any:
    """``value`` with ``${NAME}`` replaced from ``context`` in every string, recursively."""
    if isinstance(value, str):
        def sub(m: re.Match[str]) -> str:
            if m.group(1):
                return "${" + m.group(2) + "}"
            name = m.group(2)
            if name not in context:
                raise PlanError(f"plan refers to ${{{name}}}, which this episode does not define")
            return str(context[name])

        return _VAR.sub(sub, value)
    if isinstance(value, dict):
        return {k: expand(v, context) for k, v in value.items()}
    if isinstance(value, list):
        return [expand(v, context) for v in value]
    return value


def load_plan(path: Path, env_root: Path) -> list[PlanStep]:
    """Read a plan file; file-valued arguments are read now, relative to ``env_root``."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PlanError(f"{path}: no such file") from None
    except tomllib.TOMLDecodeError as exc:
        raise PlanError(f"{path}: not valid TOML: {exc}") from None
    raw_steps = data.get("step")
    if not isinstance(raw_steps, list) or not raw_steps:
        raise PlanError(f"{path}: a plan needs at least one [[step]]")
    steps = []
    for n, raw in enumerate(raw_steps, 1):
        unknown = set(raw) - {"say", "tool", "args", "files", "done"}
        if unknown:
            raise PlanError(f"{path}: step {n}: unknown key(s) {', '.join(sorted(unknown))}")
        args = dict(raw.get("args", {}))
        for arg, rel in raw.get("files", {}).items():
            try:
                args[arg] = (env_root / rel).read_text(encoding="utf-8")
            except FileNotFoundError:
                raise PlanError(f"{path}: step {n}: files.{arg}: {rel} does not exist") from None
        step = PlanStep(say=raw.get("say", ""), tool=raw.get("tool"), args=args, done=bool(raw.get("done", False)))
        if step.tool is None and not step.done:
            raise PlanError(f"{path}: step {n}: needs a 'tool' or 'done = true'")
        steps.append(step)
    return steps
