"""Checkpoints of a running emulator: ``save_checkpoint(emulator, path)`` and ``restore_checkpoint(path, state)``.

A checkpoint is one SQLite file holding what the state file holds (objects with events, idempotency keys, id
counters, the clock, the API version), copied consistently with SQLite's online backup API while the store's lock
keeps requests out, plus the webhook deliveries (the log, and those still waiting to be attempted, with their signed
payloads). An emulator started with ``state=`` on a restored copy answers as the saved one did, and delivers the
waiting webhooks at once.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from stripebench_emulator.model.engine import Emulator
from stripebench_emulator.web.webhooks import CHECKPOINT_META


def save_checkpoint(emulator: Emulator, dest: str | os.PathLike[str]) -> int:
    """Write the emulator's whole state to the new file ``dest`` (replaced atomically if it exists); its size."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".tmp")
    tmp.unlink(missing_ok=True)
    with emulator.store.lock:  # the deliveries and the store from the same instant
        hooks = emulator.webhooks
        extra = {CHECKPOINT_META: hooks.saved_state()} if hooks is not None else {}
        emulator.store.backup(tmp, extra)
    os.replace(tmp, dest)
    return dest.stat().st_size


def restore_checkpoint(src: str | os.PathLike[str], state: str | os.PathLike[str]) -> None:
    """Copy the checkpoint ``src`` to ``state`` (a state file no emulator has open), with the backup API."""
    state = Path(state)
    state.parent.mkdir(parents=True, exist_ok=True)
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(str(state) + suffix).unlink(missing_ok=True)
    source = sqlite3.connect(f"file:{Path(src).resolve()}?mode=ro", uri=True)
    target = sqlite3.connect(str(state))
    try:
        source.backup(target)
    finally:
        target.close()
        source.close()


__all__ = ["restore_checkpoint", "save_checkpoint"]
