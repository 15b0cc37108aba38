"""Keep the garbage collector off a loaded episode: its index is long-lived and never garbage.

A large trace's index is millions of objects that live as long as the screen.
Python's collector walks all of them on every full collection, which steps and
seeks trigger now and then: a pause of tens of milliseconds on a small trace and
far more on a large one. ``gc.freeze`` moves every object alive now out of the
collector's sight (reference counting still frees them); ``thaw`` hands them back
when the screen goes away, so that nothing frozen outlives it uncollected.

A seek builds and draws a frame out of many short-lived objects; collections
triggered while doing so (a dozen young passes, milliseconds in all) only delay
that frame. ``CollectionsDeferred`` holds them off until the frame is on screen:
the garbage is the same, it is just collected once the user sees the turn.
"""

from __future__ import annotations

import gc


def freeze() -> None:
    """Exclude everything alive now (the index just built) from future collections."""
    gc.freeze()


def thaw() -> None:
    """Let the collector see the frozen objects again (they are collected if unreachable)."""
    gc.unfreeze()


class CollectionsDeferred:
    """Collections held off from ``hold()`` until ``release()`` (a frame has been drawn); reentrant, and it
    never turns on a collector that someone else had turned off."""

    def __init__(self) -> None:
        self.held = False

    def hold(self) -> bool:
        """Stop automatic collections if they are on; True if this call stopped them (release() is then due)."""
        if self.held or not gc.isenabled():
            return False
        gc.disable()
        self.held = True
        return True

    def release(self) -> None:
        """Turn collections back on if ``hold`` turned them off."""
        if self.held:
            self.held = False
            gc.enable()
