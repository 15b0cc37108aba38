"""MCP tool servers an agent works through: shell, files, browser, stripe_docs.

Each speaks MCP over stdio and is started as
``python -m stripebench_tui.tools.<name> --workspace DIR [options]``
(``stripebench_tui.tools.client.ToolServerHandle.builtin`` does that):

- ``shell``: tools ``shell``, ``list_background``, ``stop_background``; options ``--timeout S`` (default 120),
  ``--max-output BYTES`` (30000), ``--login`` (run through ``bash -lc``; slow where profiles are heavy).
  Commands get the server's environment, so set STRIPE_API_BASE etc. in the env the server is spawned with.
- ``files``: ``view_file``, ``create_file``, ``replace_in_file``, ``insert_lines``; paths stay inside the workspace.
- ``browser``: ``browser_navigate``, ``browser_click``, ``browser_fill``, ``browser_type``, ``browser_press``,
  ``browser_select``, ``browser_scroll``, ``browser_wait_for_text``, ``browser_page_text``, ``browser_snapshot``,
  ``browser_screenshot``, ``browser_focus``, ``browser_reload``; options ``--screenshots DIR``, ``--timeout S``,
  ``--headed``.
- ``stripe_docs``: ``search_stripe_documentation``; options ``--cache-dir DIR``, ``--build``.

Environment: ``STRIPEBENCH_WORKSPACE`` (default for ``--workspace``), ``STRIPEBENCH_TOOL_LOG_LEVEL`` (WARNING),
``STRIPEBENCH_CACHE_DIR`` (docs index), ``STRIPEBENCH_CHROMIUM`` (browser), ``STRIPEBENCH_MCP_SDK_STDIO=1``
(use the SDK's own stdio transport instead of ours).

Several servers can share one process: ``python -m stripebench_tui.tools.bundle shell --workspace DIR -- files
--workspace DIR`` (each part a server's name and its own options) serves all their tools as one MCP endpoint, each
tool naming its server in its metadata (``SERVER_META``). An episode starts its servers that way: every server
process pays about a second of CPU importing the MCP SDK, so one process instead of three or four saves most of it.
Every result carries text for the model and, where useful, structured data (exit code, paths, URLs).
"""

BUILTIN_SERVERS = ("shell", "files", "browser", "stripe_docs")
SERVER_META = "stripebench/server"  # the key, in a listed tool's metadata, of the server that offers it
