"""What every detector shares: the ``Detector`` protocol and small readers of events (operations, claims, edits)."""

from __future__ import annotations

import re
from typing import Any, Iterable, Protocol

from stripebench_tui.core.events import Event, Finding, ToolCall

WARNING, ERROR, INFO = "warning", "error", "info"
EDIT_TOOLS = frozenset({"create_file", "replace_in_file", "insert_lines"})
_ID_PART = re.compile(r"^[a-z]{2,}(?:_[a-z]+)*_[A-Za-z0-9]{6,}$")
# Words an agent uses when it says the work is finished; read only in its last messages or a submission.
_CLAIM = re.compile(r"(?i)\b(done|complete[ds]?|completed|finished|works|working|success(?:ful(?:ly)?)?|migrated|"
                    r"fixed|submitted|ready|all set)\b")


class Detector(Protocol):
    """Reads events one at a time and says, now or at the end, which failure modes it saw.

    ``wants`` names the event types ``feed`` is given (the runner dispatches by type, so a detector costs
    nothing on the others). ``finish`` runs once when the episode ends (``reason`` as in ``episode_end``).
    """

    name: str
    wants: tuple[str, ...]

    def feed(self, event: Event) -> Iterable[Finding] | None: ...

    def finish(self, reason: str) -> Iterable[Finding] | None: ...


def operation(method: str, path: str) -> str:
    """A request's operation: its method and path with object ids as ``{id}`` (``POST /v1/customers/{id}``)."""
    return method + " " + "/".join("{id}" if _ID_PART.match(p) else p for p in path.split("/"))


def is_create(method: str, path: str) -> bool:
    """A POST to a collection (``/v1/customers``, ``/v1/checkout/sessions``): it makes a new object."""
    if method != "POST" or not path.startswith("/v1/"):
        return False
    parts = [p for p in path[4:].split("/") if p]
    return bool(parts) and not any(_ID_PART.match(p) for p in parts)


def claims_done(text: str) -> bool:
    """Whether an agent's message says the work is finished."""
    return bool(_CLAIM.search(text or ""))


def is_edit(call: ToolCall) -> bool:
    """A tool call that changes the workspace's code."""
    return call.tool in EDIT_TOOLS


def shell_command(call: ToolCall) -> str:
    """The command of a shell call ("" for other tools)."""
    command = call.arguments.get("command") if call.tool == "shell" else None
    return command if isinstance(command, str) else ""


def finding(detector: str, message: str, evidence: list[dict[str, Any]], *, turn: int, seq: int = 0,
            severity: str = WARNING) -> Finding:
    """A ``Finding`` marking ``turn``; ``seq`` is the event that made it fire (the bus restamps a live one)."""
    return Finding(seq=seq, turn=turn, detector=detector, message=message, severity=severity, evidence=evidence)


__all__ = ["Detector", "EDIT_TOOLS", "ERROR", "INFO", "WARNING", "claims_done", "finding", "is_create", "is_edit",
           "operation", "shell_command"]
