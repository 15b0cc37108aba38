"""Fixtures for the tool server tests: a workspace and servers reached through a real MCP client."""

from __future__ import annotations

from pathlib import Path

import pytest

from stripebench_tui.tools.client import ToolServerHandle


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty episode workspace."""
    ws = tmp_path / "workspace"
    ws.mkdir()
    return ws


@pytest.fixture
async def shell(workspace: Path):
    """The shell tool server on the workspace, with a short default timeout and a small output cap."""
    async with ToolServerHandle.builtin("shell", str(workspace), "--timeout", "20", "--max-output", "1000") as handle:
        yield handle


@pytest.fixture
async def files(workspace: Path):
    """The files tool server on the workspace."""
    async with ToolServerHandle.builtin("files", str(workspace)) as handle:
        yield handle
