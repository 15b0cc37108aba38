"""Batch runs: environments × agents × runs, each episode its own process, under one batch directory.

``matrix`` turns what was asked into cells, ``manifest`` keeps ``batch.json`` and each cell's result,
``runner`` plays the cells through a ``BatchRunner`` (``local``: a bounded process pool, the default;
``ray``: one Ray task per episode on any node of a cluster) and ``report`` builds the results table.
"""

from __future__ import annotations

import importlib
from typing import Any

from stripebench_tui.errors import UserError

# name -> "module:attribute" of a BatchRunner factory; naming one imports only its module (no Ray unless asked).
RUNNERS: dict[str, str] = {
    "local": "stripebench_tui.batch.local:LocalPool",
    "ray": "stripebench_tui.batch.ray_runner:RayRunner",
}


def create_runner(name: str, **options: Any) -> Any:
    """The batch runner registered under ``name``, built with its options."""
    if name not in RUNNERS:
        raise UserError(f"unknown batch runner {name!r}; known: {', '.join(RUNNERS)}")
    module, _, attr = RUNNERS[name].partition(":")
    return getattr(importlib.import_module(module), attr)(**options)


__all__ = ["RUNNERS", "create_runner"]
