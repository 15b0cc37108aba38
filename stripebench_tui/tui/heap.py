"""Keep the garbage collector off a loaded episode: its index is long-lived and never garbage.

A large trace's index is millions of objects that live as long as the screen.
Python's collector walks all of them on every full collection, which steps and
seeks trigger now and then: a pause of tens of milliseconds on a small trace and
far more on a large one. ``gc.freeze`` moves every object alive now out of the
collector's sight (reference counting still frees them); ``thaw`` hands them back
when the screen goes away, so that nothing frozen outlives it uncollected.
"""

from __future__ import annotations

import gc


def freeze() -> None:
    """Exclude everything alive now (the index just built) from future collections."""
    gc.freeze()


def thaw() -> None:
    """Let the collector see the frozen objects again (they are collected if unreachable)."""
    gc.unfreeze()
