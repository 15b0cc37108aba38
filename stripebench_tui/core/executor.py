"""How the driver runs tools: a small protocol that MCP tool clients (stripebench_tui.tools) implement.

A tool that ran and failed (non-zero exit, bad arguments, page error) returns a
``ToolOutcome`` with ``is_error=True``; raising means the executor itself broke
(a server died), which ends the episode with reason ``error``.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from stripebench_tui.core.tool_types import ToolOutcome, ToolSpec


@runtime_checkable
class ToolExecutor(Protocol):
    """The tools of an episode, whatever servers provide them."""

    async def tools(self) -> list[ToolSpec]:
        """Every tool the agent may call."""

    async def call(self, tool: str, arguments: dict[str, Any]) -> ToolOutcome:
        """Run one tool call and return its outcome."""


__all__ = ["ToolExecutor", "ToolOutcome"]
