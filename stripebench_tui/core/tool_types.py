"""What a tool is (``ToolSpec``, as its MCP server describes it) and what one call of it returned (``ToolOutcome``):
the values agents, the driver and tool executors pass each other."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ToolSpec:
    """A tool the agent may call, as its MCP server describes it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    server: str = ""


@dataclass
class ToolOutcome:
    """What one tool call returned. ``duration`` None lets the driver time the call itself."""

    text: str = ""
    is_error: bool = False
    exit_code: int | None = None
    duration: float | None = None
    startup: float = 0.0  # seconds of the call the tool spent starting (the browser launching Chromium)
    images: list[str] = field(default_factory=list)  # paths relative to the trace's directory
