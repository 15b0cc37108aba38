"""Several built-in tool servers in one process, as one MCP endpoint.

    python -m stripebench_tui.tools.bundle shell --workspace DIR [--timeout S] -- files --workspace DIR -- stripe_docs

Each part (parts are separated by ``--``) is a server's name followed by the options that server takes on its
own (``python -m stripebench_tui.tools.<name> --help``). Every listed tool names its server in its metadata
(``stripebench_tui.tools.SERVER_META``); when the endpoint stops, every part's cleanups run (the shell's
background jobs are stopped, the browser closed).

Why: importing the MCP SDK costs a server process about a second of CPU, paid once here instead of once per
server — most of an episode's tool start-up, on a machine where several episodes run at once.
"""

from __future__ import annotations

import importlib
import sys

from stripebench_tui.tools import BUILTIN_SERVERS
from stripebench_tui.tools.serving import run_together

SEPARATOR = "--"


def split_parts(argv: list[str]) -> list[tuple[str, list[str]]]:
    """``shell --workspace W -- files --workspace W`` → [("shell", ["--workspace", "W"]), ("files", …)]."""
    parts: list[list[str]] = [[]]
    for arg in argv:
        if arg == SEPARATOR:
            parts.append([])
        else:
            parts[-1].append(arg)
    found = [(part[0], part[1:]) for part in parts if part]
    if not found:
        sys.exit("name at least one tool server: python -m stripebench_tui.tools.bundle shell --workspace DIR -- files …")
    names = [name for name, _ in found]
    for name in names:
        if name not in BUILTIN_SERVERS:
            sys.exit(f"unknown tool server {name!r}; built-in ones are {', '.join(BUILTIN_SERVERS)}")
    if len(set(names)) != len(names):
        sys.exit("a tool server is named twice")
    return found


def command_args(parts: list[tuple[str, list[str]]]) -> list[str]:
    """The arguments after ``-m stripebench_tui.tools.bundle`` that run ``parts`` (the inverse of ``split_parts``)."""
    args: list[str] = []
    for name, options in parts:
        if args:
            args.append(SEPARATOR)
        args += [name, *options]
    return args


def main(argv: list[str] | None = None) -> None:
    """Entry point: prepare every part's server, then serve them together over stdio."""
    parts = split_parts(sys.argv[1:] if argv is None else argv)
    run_together([importlib.import_module(f"stripebench_tui.tools.{name}").prepare(options) for name, options in parts])


if __name__ == "__main__":
    main()
