"""MCP tool servers an agent works through: shell, files, browser, stripe_docs.

Each is runnable as ``python -m stripebench_tui.tools.<name> --workspace DIR`` and
speaks MCP over stdio; ``stripebench_tui.tools.client`` connects to them.
"""

BUILTIN_SERVERS = ("shell", "files", "browser", "stripe_docs")
