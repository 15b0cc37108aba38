"""Shared by the checkpoint tests: play an episode whose world is also copied the naive way at each checkpoint, and
compare each restored checkpoint with that copy, object by object and file by file."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stripebench_tui.runtime.checkpoints import (
    SKIPPED_DIRS,
    SQLITE_COMPANIONS,
    SQLITE_MAGIC,
    CheckpointInfo,
    list_checkpoints,
    restore_emulator,
    restore_workspace,
)
from stripebench_tui.runtime.episode import Episode, EpisodeConfig

# Id counters a read request advances too (its request id): a read served between the witness's copy and the
# checkpoint's moves them, and nothing stored depends on them.
READ_COUNTERS = {"req"}


def sqlite_rows(path: Path) -> list[str]:
    """A database's schema and rows as SQL text, in a stable order."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return sorted(line for line in conn.iterdump() if not line.startswith(("BEGIN", "COMMIT")))
    finally:
        conn.close()


def workspace_files(root: Path) -> dict[str, Any]:
    """Each path under ``root`` (the checkpoint's skipped directories left out): a file's bytes (a database's rows),
    a link's target, or "dir"."""
    out: dict[str, Any] = {}
    databases: set[str] = set()
    for base, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS or os.path.islink(os.path.join(base, d))]
        rel_base = os.path.relpath(base, root)
        for name in [*dirs, *files]:
            full = Path(base) / name
            rel = name if rel_base == "." else f"{rel_base}/{name}"
            st = full.lstat()
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(full))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = "dir"
            elif stat.S_ISREG(st.st_mode):
                with open(full, "rb") as fh:
                    head = fh.read(len(SQLITE_MAGIC))
                if head == SQLITE_MAGIC:
                    out[rel] = ("sqlite", sqlite_rows(full))
                    databases.add(rel)
                else:
                    out[rel] = full.read_bytes()
    for rel in list(out):  # a database's journal is in its rows
        if any(rel.endswith(s) and rel[: -len(s)] in databases for s in SQLITE_COMPANIONS):
            del out[rel]
    return out


def emulator_state(emulator: Any) -> dict[str, Any]:
    """The emulator's objects (events included), idempotency records and counters, as JSON would hold them."""
    store = emulator.store
    return json.loads(json.dumps({"objects": store.objects, "idempotency": store.idempotency,
                                  "ids": dict(emulator.ids.counters), "clock": [emulator.clock.offset,
                                                                                 emulator.clock.frozen_at]}))


@dataclass
class Witness:
    """The world copied the naive way at the instant of each checkpoint."""

    emulator: dict[int, dict[str, Any]] = field(default_factory=dict)
    workspace: dict[int, dict[str, Any]] = field(default_factory=dict)


class WitnessedEpisode(Episode):
    """An Episode that also copies the emulator's state and the workspace right before each checkpoint is taken
    (under the emulator's lock, so nothing changes the store in between)."""

    witness: Witness

    def _checkpoints(self, bus):
        checkpointer = super()._checkpoints(bus)
        if checkpointer is None:
            return None
        self.witness = Witness()
        take = checkpointer.take
        emulator = checkpointer.emulator

        def witnessed(turn: int, next_seq: int, trace_bytes: int | None = None) -> CheckpointInfo:
            with emulator.store.lock:
                self.witness.emulator[turn] = emulator_state(emulator)
                self.witness.workspace[turn] = workspace_files(checkpointer.workspace)
                return take(turn, next_seq, trace_bytes)

        checkpointer.take = witnessed  # type: ignore[method-assign]
        return checkpointer


async def play_witnessed(config: EpisodeConfig) -> WitnessedEpisode:
    episode = WitnessedEpisode(config)
    await episode.run()
    return episode


def compare_restores(episode: WitnessedEpisode, scratch: Path) -> list[int]:
    """Restore every checkpoint of the episode into ``scratch`` and assert it equals the witness; the turns."""
    from stripebench_emulator import Emulator

    assert episode.result is not None and episode.result.trace_path is not None
    infos = list_checkpoints(episode.result.trace_path)
    assert [i.turn for i in infos] == sorted(episode.witness.emulator), "a checkpoint is missing or extra"
    for info in infos:
        state = scratch / f"emulator-{info.turn}.sqlite"
        restore_emulator(info, state)
        restored = Emulator(seed=episode.config.seed, state=state)
        try:
            got, want = emulator_state(restored), episode.witness.emulator[info.turn]
        finally:
            restored.close()
        assert got["objects"].keys() == want["objects"].keys(), info.turn
        for kind, objects in want["objects"].items():
            assert got["objects"][kind].keys() == objects.keys(), (info.turn, kind)
            for object_id, obj in objects.items():
                assert got["objects"][kind][object_id] == obj, (info.turn, kind, object_id)
        assert got["idempotency"] == want["idempotency"], info.turn
        changed = {k for k in got["ids"].keys() | want["ids"].keys() if got["ids"].get(k) != want["ids"].get(k)}
        assert changed <= READ_COUNTERS, (info.turn, {k: (want["ids"].get(k), got["ids"].get(k)) for k in changed})
        assert got["clock"] == want["clock"], info.turn
        workspace = scratch / f"workspace-{info.turn}"
        restore_workspace(info, workspace)
        files, expected = workspace_files(workspace), episode.witness.workspace[info.turn]
        assert files.keys() == expected.keys(), (info.turn, files.keys() ^ expected.keys())
        for rel, content in expected.items():
            assert files[rel] == content, (info.turn, rel)
    return [i.turn for i in infos]
