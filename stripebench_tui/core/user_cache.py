"""Where stripebench caches things: ``$STRIPEBENCH_CACHE``, else the user's cache directory.

In ``core`` so that the trace reader (which keeps the turn index of a read-only trace there, ``cold_index``)
and the edges (environment virtualenvs, Node, bench plans) name one folder.
"""

from __future__ import annotations

import os
from pathlib import Path

CACHE_VAR = "STRIPEBENCH_CACHE"


def cache_root() -> Path:
    """Where stripebench caches things: ``$STRIPEBENCH_CACHE``, else the user's cache directory."""
    override = os.environ.get(CACHE_VAR)
    if override:
        return Path(override).expanduser().resolve()
    # only without $STRIPEBENCH_CACHE: the trace reader loads this module on every start-up, --help too
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("stripebench"))


__all__ = ["CACHE_VAR", "cache_root"]
