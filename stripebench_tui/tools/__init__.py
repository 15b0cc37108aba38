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
Every result carries text for the model and, where useful, structured data (exit code, paths, URLs).
"""

BUILTIN_SERVERS = ("shell", "files", "browser", "stripe_docs")
