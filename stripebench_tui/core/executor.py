"""How the driver runs tools: a small protocol that MCP tool clients (stripebench_tui.tools) implement.

A tool that ran and failed (non-zero exit, bad arguments, page error) returns a
``ToolOutcome`` with ``is_error=True``; raising means the executor itself broke
(a server died), which ends the episode with reason ``error``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from stripebench_tui.core.agent import ToolSpec


@dataclass
class ToolOutcome:
    """What one tool call returned. ``duration`` None lets the driver time the call itself."""

    text: str = ""
    is_error: bool = False
    exit_code: int | None = None
    duration: float | None = None
    startup: float = 0.0  # seconds of the call the tool spent starting (the browser launching Chromium)
    images: list[str] = field(default_factory=list)  # paths relative to the trace's directory


@runtime_checkable
class ToolExecutor(Protocol):
    """The tools of an episode, whatever servers provide them."""

    async def tools(self) -> list[ToolSpec]:
        """Every tool the agent may call."""

    async def call(self, tool: str, arguments: dict[str, Any]) -> ToolOutcome:
        """Run one tool call and return its outcome."""


__all__ = ["ToolExecutor", "ToolOutcome"]
