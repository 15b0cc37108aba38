"""How big an environment's workspace is (files and lines), for the ``stripebench envs`` table."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

# Made by running the workspace, not part of what the agent is handed.
SKIPPED_DIRS = {".venv", "venv", "node_modules", "__pycache__", ".git", ".pytest_cache"}
SKIPPED_SUFFIXES = {".db", ".sqlite", ".sqlite3", ".pyc"}


@dataclass(frozen=True)
class Size:
    files: int
    lines: int

    def __str__(self) -> str:
        return f"{self.files} files, {self.lines} lines"


def workspace_size(root: Path) -> Size:
    """Files under ``root`` and the lines of the text ones (binary files count as files, not lines)."""
    files = lines = 0
    if not root.is_dir():
        return Size(0, 0)
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.suffix in SKIPPED_SUFFIXES:
            continue
        if SKIPPED_DIRS.intersection(path.relative_to(root).parts[:-1]):
            continue
        files += 1
        data = path.read_bytes()
        if b"\0" not in data[:8192]:
            lines += data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)
    return Size(files, lines)
