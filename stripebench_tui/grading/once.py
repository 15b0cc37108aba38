"""Work done once per grading context: scenario-based graders run their scenarios once and share the outcomes.

Every criterion of such a grader asks for the same results; the first asker computes them while the others
wait, and later evaluations on the same context reuse them. The results live on the context itself, so a new
episode (a new context) runs the scenarios again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

from stripebench_tui.grading.context import GradingContext

T = TypeVar("T")
_LOCK = threading.Lock()  # guards the creation of each context's per-key locks


def once_per_context(ctx: GradingContext, key: str, compute: Callable[[], T]) -> T:
    """``compute()`` the first time ``key`` is asked for on ``ctx``; the same object every later time."""
    store = vars(ctx)
    with _LOCK:
        lock = store.setdefault(f"_once_lock:{key}", threading.Lock())
    with lock:
        slot = f"_once:{key}"
        if slot not in store:
            store[slot] = compute()
        return store[slot]


__all__ = ["once_per_context"]
