"""What every detector shares: the ``Detector`` protocol and small readers of events (operations, claims, edits)."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any, Protocol

from stripebench_tui.core.events import Event, Finding, ToolCall

WARNING, ERROR, INFO = "warning", "error", "info"
EDIT_TOOLS = frozenset({"create_file", "replace_in_file", "insert_lines"})
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


@functools.lru_cache(maxsize=4096)
def operation(method: str, path: str) -> str:
    """A request's operation: its method and path with object ids as ``{id}`` (``POST /v1/customers/{id}``)."""
    parts = path_parts(path)
    if parts is None:
        return f"{method} {path}"
    return method + " /v1/" + "/".join("{id}" if is_id else p for p, is_id in parts)


def path_parts(path: str) -> list[tuple[str, bool]] | None:
    """A ``/v1`` path's segments, each with whether it is an object id (None for another path).

    Stripe paths alternate a resource and an id (``customers/cus_1/sources/card_2``), the resource being two
    segments under a namespace (``checkout/sessions``); ``search`` and actions (``confirm``) are not ids.
    """
    if not path.startswith("/v1/"):
        return None
    segs = [p for p in path[4:].split("/") if p]
    out: list[tuple[str, bool]] = []
    i, want_id = 0, False
    while i < len(segs):
        seg = segs[i]
        if want_id:
            is_id = seg != "search"
            out.append((seg, is_id))
            want_id = False
        elif seg in NAMESPACES and i + 1 < len(segs):
            out += [(seg, False), (segs[i + 1], False)]
            i += 1
            want_id = True
        else:
            out.append((seg, False))
            want_id = True
        i += 1
    return out


NAMESPACES = frozenset({"apps", "billing", "billing_portal", "checkout", "climate", "entitlements",
                        "financial_connections", "forwarding", "identity", "issuing", "radar", "reporting", "sigma",
                        "tax", "terminal", "test_helpers", "treasury", "v2"})


@functools.lru_cache(maxsize=4096)
def is_create(method: str, path: str) -> bool:
    """A POST to a collection (``/v1/customers``, ``/v1/checkout/sessions``): it makes a new object."""
    parts = path_parts(path) if method == "POST" else None
    return bool(parts) and not any(is_id for _, is_id in parts)  # type: ignore[union-attr]


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
           "operation", "path_parts", "shell_command"]
