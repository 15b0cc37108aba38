"""Keep a standalone emulator's collector off its stored objects (``stripebench emulator``, its own process).

Stored Stripe objects (events included) are long-lived, only grow in number and hold no reference cycles. CPython's
collector nevertheless walks the young ones on every middle-generation pass (a pause of a few milliseconds every few
hundred requests under load, the emulator's p99) and all of them on every full pass (tens of milliseconds, longer as
the account grows). So whatever survives a young collection is frozen right away (``gc.freeze``, which is O(1)): the
next passes see only what was allocated since. Reference counting still frees frozen objects; only garbage in
reference cycles that was alive at a freeze waits for the periodic sweep, which thaws everything, collects once and
freezes again.

Only for a process that is nothing but the emulator: in a process shared with other work (the TUI, tests) the freeze
would cover that work's objects too.
"""

from __future__ import annotations

import gc
import threading
from typing import Any

SWEEP_SECONDS = 600.0  # how often frozen cyclic garbage is reclaimed (one full collection)


class GcPolicy:
    """Installed by ``install()``; ``close()`` puts the collector back as it was (for tests)."""

    def __init__(self, sweep_seconds: float = SWEEP_SECONDS) -> None:
        self.sweep_seconds = sweep_seconds
        self.sweeps = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _on_collect(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "stop" and info.get("generation") == 0:
            gc.freeze()

    def start(self) -> GcPolicy:
        gc.collect()
        gc.freeze()  # what was loaded to get here lives as long as the process
        gc.callbacks.append(self._on_collect)
        if self.sweep_seconds > 0:
            self._thread = threading.Thread(target=self._sweep_loop, name="emulator-gc-sweep", daemon=True)
            self._thread.start()
        return self

    def sweep(self) -> int:
        """Thaw, collect everything once, freeze again; returns the number of unreachable objects found."""
        gc.unfreeze()
        try:
            found = gc.collect()
        finally:
            gc.freeze()
        self.sweeps += 1
        return found

    def _sweep_loop(self) -> None:
        while not self._stop.wait(self.sweep_seconds):
            self.sweep()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self._on_collect in gc.callbacks:
            gc.callbacks.remove(self._on_collect)
        gc.unfreeze()


def install(sweep_seconds: float = SWEEP_SECONDS) -> GcPolicy:
    """Apply the policy to this process (call once, before serving)."""
    return GcPolicy(sweep_seconds).start()
