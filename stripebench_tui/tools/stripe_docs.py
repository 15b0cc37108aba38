"""The ``stripe_docs`` tool server: offline search over Stripe's API reference and our emulator notes.

Run it as ``python -m stripebench_tui.tools.stripe_docs [--cache-dir DIR]``; add
``--build`` to build the index and exit (e.g. at install time). The index is built
at first use otherwise, with progress on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult

from stripebench_tui.tools import docs_index
from stripebench_tui.tools.serving import Served, argument_parser, new_server, run, tool_error, tool_result

MAX_LIMIT = 20


class Docs:
    """The index connection, opened (and built if needed) on first search."""

    def __init__(self, cache_dir: Path) -> None:
        self.cache_dir = cache_dir
        self._conn: sqlite3.Connection | None = None
        self._lock = asyncio.Lock()

    async def connection(self) -> sqlite3.Connection:
        """The open index; the first call may spend a few seconds building it."""
        async with self._lock:
            if self._conn is None:
                # Built in a thread so the server keeps answering pings while it works.
                await asyncio.to_thread(lambda: docs_index.open_index(self.cache_dir, sys.stderr).close())
                self._conn = sqlite3.connect(docs_index.index_file(self.cache_dir), check_same_thread=False)
            return self._conn

    async def search(self, query: str, limit: int) -> CallToolResult:
        """Ranked snippets for ``query`` as tool output."""
        if not query.strip():
            return tool_error("empty query: describe what you are looking for, e.g. 'create checkout session'")
        if not 1 <= limit <= MAX_LIMIT:
            return tool_error(f"limit must be between 1 and {MAX_LIMIT}")
        hits = docs_index.search(await self.connection(), query, limit)
        if not hits:
            return tool_result(f"no documentation matches {query!r}; try other words", {"results": []})
        parts = []
        for number, hit in enumerate(hits, 1):
            snippet = " ".join(hit.snippet.split())
            parts.append(f"{number}. {hit.title}\n   [{hit.kind} · {hit.source}]\n   {snippet}")
        rows = [
            {"title": h.title, "kind": h.kind, "source": h.source, "snippet": h.snippet, "score": round(h.score, 3)}
            for h in hits
        ]
        return tool_result("\n\n".join(parts), {"results": rows})


def build_server(docs: Docs) -> MCPServer:
    """The MCP server exposing the documentation search."""
    server = new_server("stripe_docs", "Search Stripe's API reference and the emulator notes offline.")

    @server.tool()
    async def search_stripe_documentation(query: str, limit: int = 5) -> CallToolResult:
        """Full-text search of Stripe's API reference (methods, parameters, objects) and notes on the offline emulator; returns ranked snippets with titles."""  # noqa: E501 - the tool's description as the model reads it: one line
        return await docs.search(query, limit)

    return server


def _parse(argv: list[str] | None) -> tuple[argparse.Namespace, Path]:
    parser = argument_parser("stripe_docs", "MCP server that searches Stripe documentation offline.")
    parser.add_argument("--cache-dir", help="where the index lives (default: $STRIPEBENCH_CACHE_DIR or the user cache)")
    parser.add_argument("--build", action="store_true", help="(re)build the index, print where it is, and exit")
    args = parser.parse_args(argv)
    return args, Path(args.cache_dir) if args.cache_dir else docs_index.default_cache_dir()


def prepare(argv: list[str] | None = None) -> Served:
    """Parse arguments; the server and its cleanups, ready to serve (``--build`` is main's alone)."""
    args, cache_dir = _parse(argv)
    if args.build:
        sys.exit("--build builds the index and exits: run it on its own, not in a bundle")
    return build_server(Docs(cache_dir)), []


def main(argv: list[str] | None = None) -> None:
    """Entry point: parse arguments, then build the index or serve over stdio."""
    args, cache_dir = _parse(argv)
    if args.build:
        docs_index.build(docs_index.index_file(cache_dir))
        return
    run(build_server(Docs(cache_dir)))


if __name__ == "__main__":
    main()
