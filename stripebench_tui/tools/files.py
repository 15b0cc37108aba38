"""The ``files`` tool server: view, create and edit files inside the episode workspace.

Run it as ``python -m stripebench_tui.tools.files --workspace DIR``. Every path is
taken relative to the workspace and must stay inside it, also after following
symlinks.
"""

from __future__ import annotations

import os
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult

from stripebench_tui.tools.serving import Served, argument_parser, new_server, run, tool_error, tool_result, workspace_dir

MAX_VIEW_LINES = 2000  # a whole-file view longer than this shows its start and says how to see more
MAX_LINE_CHARS = 2000


class OutsideWorkspace(Exception):
    """A path that resolves outside the workspace."""


class Files:
    """File operations confined to one workspace directory."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace

    def resolve(self, path: str) -> Path:
        """The absolute path of ``path`` (relative to the workspace); raises if it leaves the workspace."""
        if not path or not path.strip():
            raise OutsideWorkspace("empty path: give a file path relative to the workspace")
        candidate = Path(path)
        if not candidate.is_absolute():
            candidate = self.workspace / candidate
        # resolve() follows symlinks, so a link pointing outside is caught like a ../ escape.
        real = candidate.resolve()
        if real != self.workspace and not real.is_relative_to(self.workspace):
            raise OutsideWorkspace(f"{path!r} is outside the workspace {self.workspace}; use a path inside it")
        return real

    def shown(self, real: Path) -> str:
        """A path as the agent should write it: relative to the workspace."""
        return str(real.relative_to(self.workspace)) if real != self.workspace else "."

    def view(self, path: str, start_line: int | None, end_line: int | None) -> CallToolResult:
        """Numbered lines of a file (optionally a range), or a directory listing."""
        real = self.resolve(path)
        if real.is_dir():
            return self._list_dir(real)
        text = self._read(real)
        lines = text.splitlines()
        total = len(lines)
        start = 1 if start_line is None else start_line
        end = total if end_line is None or end_line == -1 else end_line
        if start < 1 or (total and start > total) or end < start:
            return tool_error(f"line range {start}-{end} is not within {self.shown(real)} (1-{total} lines)")
        end = min(end, total)
        note = ""
        if start_line is None and end_line is None and total > MAX_VIEW_LINES:
            end = MAX_VIEW_LINES
            note = f"\n[showing lines 1-{end} of {total}; pass start_line/end_line to see the rest]"
        numbered = []
        for number in range(start, end + 1):
            line = lines[number - 1]
            if len(line) > MAX_LINE_CHARS:
                line = line[:MAX_LINE_CHARS] + f" [… {len(line) - MAX_LINE_CHARS} characters cut]"
            numbered.append(f"{number:6}\t{line}")
        body = "\n".join(numbered) if numbered else "(empty file)"
        data = {"path": self.shown(real), "start_line": start, "end_line": end, "total_lines": total}
        return tool_result(body + note, data)

    def _list_dir(self, real: Path) -> CallToolResult:
        entries = sorted(real.iterdir(), key=lambda p: p.name)
        names = [p.name + ("/" if p.is_dir() else "") for p in entries if p.name not in (".git",)]
        listing = "\n".join(names) if names else "(empty directory)"
        return tool_result(f"{self.shown(real)}/ is a directory:\n{listing}", {"path": self.shown(real), "entries": names})

    def _read(self, real: Path) -> str:
        if not real.exists():
            raise FileNotFoundError(f"{self.shown(real)} does not exist")
        data = real.read_bytes()
        if b"\0" in data[:8192]:
            raise ValueError(f"{self.shown(real)} looks like a binary file ({len(data)} bytes); not shown")
        return data.decode("utf-8", "replace")

    def create(self, path: str, content: str) -> CallToolResult:
        """Write ``content`` to a file, creating parent directories; says when it replaced a file."""
        real = self.resolve(path)
        if real.is_dir():
            return tool_error(f"{self.shown(real)} is a directory")
        existed = real.exists()
        before = len(self._read(real).splitlines()) if existed else 0
        real.parent.mkdir(parents=True, exist_ok=True)
        real.write_text(content, encoding="utf-8")
        lines = len(content.splitlines())
        if existed:
            text = f"overwrote {self.shown(real)} (was {before} lines, now {lines})"
        else:
            text = f"created {self.shown(real)} ({lines} lines)"
        return tool_result(text, {"path": self.shown(real), "overwrote": existed, "lines": lines})

    def replace(self, path: str, old_text: str, new_text: str) -> CallToolResult:
        """Replace the one occurrence of ``old_text``; an error when it occurs zero or several times."""
        real = self.resolve(path)
        text = self._read(real)
        if not old_text:
            return tool_error("old_text is empty: pass the exact text to replace")
        count = text.count(old_text)
        if count == 0:
            return tool_error(f"old_text does not occur in {self.shown(real)}; view the file and copy the text exactly")
        if count > 1:
            starts, at = [], text.find(old_text)
            while at != -1:
                starts.append(text.count("\n", 0, at) + 1)
                at = text.find(old_text, at + 1)
            where = ", ".join(str(n) for n in starts)
            return tool_error(
                f"old_text occurs {count} times in {self.shown(real)} (starting on lines {where}); "
                "include more surrounding lines so it is unique"
            )
        at = text.index(old_text)
        line = text.count("\n", 0, at) + 1
        real.write_text(text.replace(old_text, new_text, 1), encoding="utf-8")
        return tool_result(
            f"replaced 1 occurrence in {self.shown(real)} at line {line}",
            {"path": self.shown(real), "line": line},
        )

    def insert(self, path: str, after_line: int, text: str) -> CallToolResult:
        """Insert ``text`` after line ``after_line`` (0 inserts at the top)."""
        real = self.resolve(path)
        lines = self._read(real).splitlines(keepends=True)
        if after_line < 0 or after_line > len(lines):
            return tool_error(f"after_line must be between 0 and {len(lines)} for {self.shown(real)}")
        if lines and not lines[-1].endswith("\n") and after_line == len(lines):
            lines[-1] += "\n"
        added = text if text.endswith("\n") else text + "\n"
        lines[after_line:after_line] = [added]
        real.write_text("".join(lines), encoding="utf-8")
        count = len(added.splitlines())
        return tool_result(
            f"inserted {count} line(s) after line {after_line} of {self.shown(real)}",
            {"path": self.shown(real), "after_line": after_line, "lines": count},
        )


def _guarded(call):
    """Turn the errors an agent can cause into tool errors with a one-line message."""
    try:
        return call()
    except (OutsideWorkspace, FileNotFoundError, ValueError, IsADirectoryError, PermissionError) as exc:
        return tool_error(str(exc) if not isinstance(exc, PermissionError) else f"permission denied: {exc.filename}")
    except OSError as exc:
        return tool_error(f"{exc.strerror or exc}")


def build_server(files: Files) -> MCPServer:
    """The MCP server exposing ``files``' operations."""
    server = new_server("files", "View and edit files in the episode workspace.")

    @server.tool()
    async def view_file(path: str, start_line: int | None = None, end_line: int | None = None) -> CallToolResult:
        """Show a file with line numbers (optionally lines start_line..end_line; end_line -1 = to the end), or list a directory."""  # noqa: E501 - the tool's description as the model reads it: one line
        return _guarded(lambda: files.view(path, start_line, end_line))

    @server.tool()
    async def create_file(path: str, content: str) -> CallToolResult:
        """Write a file with the given content; an existing file is overwritten (the result says so)."""
        return _guarded(lambda: files.create(path, content))

    @server.tool()
    async def replace_in_file(path: str, old_text: str, new_text: str) -> CallToolResult:
        """Replace old_text with new_text; old_text must occur exactly once in the file."""
        return _guarded(lambda: files.replace(path, old_text, new_text))

    @server.tool()
    async def insert_lines(path: str, after_line: int, text: str) -> CallToolResult:
        """Insert text after line after_line (0 = at the top of the file)."""
        return _guarded(lambda: files.insert(path, after_line, text))

    return server


def prepare(argv: list[str] | None = None) -> Served:
    """Parse arguments and move into the workspace; the server and its cleanups, ready to serve."""
    args = argument_parser("files", "MCP server that views and edits files in an episode workspace.").parse_args(argv)
    workspace = workspace_dir(args.workspace)
    os.chdir(workspace)
    return build_server(Files(workspace)), []


def main(argv: list[str] | None = None) -> None:
    """Entry point: parse arguments and serve over stdio."""
    run(*prepare(argv))


if __name__ == "__main__":
    main()
