"""Checkpoints: the world of an episode at a turn's end, kept beside its trace so a fork or a resume restores it.

Layout, under the trace's sidecar directory (``trace.jsonl.d/checkpoints/``)::

    blobs/ab/abcdef…       one copy of each file content seen in any checkpoint (sha-256 named), shared
    <turn>/emulator.sqlite the emulator's whole state (``stripebench_emulator.save_checkpoint``)
    <turn>/workspace.json  the workspace: each path's kind, mode, size and blob (or link target)
    <turn>/postgres.dump   the app's PostgreSQL database, when the environment has one (``runtime.pg_checkpoint``)
    <turn>/info.json       when it was taken, the trace's length then, the variables the services ran with, disk use

What a checkpoint holds:
- the emulator's objects, events, idempotency keys, id counters, clock and webhook deliveries still waiting, copied
  with SQLite's online backup API while the emulator's lock keeps requests out;
- the workspace, incrementally: a file whose size, modification time and inode are unchanged since the last
  checkpoint is not read again, and a content already stored costs nothing. Directories a restore rebuilds from
  the environment's dependencies (``node_modules``, ``.next``, caches) are left out: the fork installs again, from
  the same caches, for the restored package files;
- the app's SQLite databases (any workspace file starting with SQLite's header), through the backup API, so a write
  in progress is never half copied (their ``-wal``/``-shm``/``-journal`` companions are then left out);
- the app's PostgreSQL database (an environment with ``[postgres]``), as a ``pg_dump`` of it: consistent whatever
  the app writes meanwhile, restored by the new episode's cluster before it listens (``runtime.pg_checkpoint``);
- what the services need to start again: the port variables they ran with (a restore asks for the same ports).

A restore copies the blobs into a fresh workspace (a reflink where the file system offers one): hard links would
share the stored copy with files the app and the agent's tools rewrite in place (SQLite pages, ``write_text``).

Disk use: each checkpoint records the bytes it added (a database's dump among its own); ``cap_bytes`` bounds the
whole directory, the oldest checkpoints pruned first (never the newest), with the blobs no remaining checkpoint uses.

Where a checkpoint cannot be taken (real Stripe test mode, the docker sandbox, PostgreSQL without its client
programs), ``unavailable_reason`` says why; the episode says so once and forks re-execute instead. A turn whose
database could not be dumped gets no checkpoint (the episode says why); the others are kept.
"""

from __future__ import annotations

import asyncio
import errno
import fcntl
import hashlib
import json
import os
import re
import shutil
import sqlite3
import stat
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from stripebench_tui.core.events import Service
from stripebench_tui.core.trace_writer import sidecar_dir
from stripebench_tui.errors import UserError
from stripebench_tui.runtime.pg_checkpoint import missing_tools

if TYPE_CHECKING:
    from stripebench_emulator import Emulator
    from stripebench_tui.core.driver import Driver

CHECKPOINTS = "checkpoints"
BLOBS = "blobs"
EMULATOR_FILE = "emulator.sqlite"
WORKSPACE_FILE = "workspace.json"
INFO_FILE = "info.json"
EVERY, OFF = "every", "off"
DEFAULT_CAP_MB = 2048
# Rebuilt by the dependencies step or by the services themselves; never part of a checkpoint.
SKIPPED_DIRS = frozenset({"node_modules", ".next", "__pycache__", ".pytest_cache", ".mypy_cache", ".turbo"})
SQLITE_MAGIC = b"SQLite format 3\x00"
SQLITE_COMPANIONS = ("-wal", "-shm", "-journal")
REMAP_LIMIT = 1 << 20  # files up to this size get the old episode's paths replaced by the new one's on restore
_FICLONE = 0x40049409  # ioctl: share the blocks of another file (btrfs, xfs); EOPNOTSUPP elsewhere
_HEX = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class Policy:
    """When checkpoints are taken: every ``every`` turns, or never (``every`` 0)."""

    every: int = 1

    @classmethod
    def parse(cls, text: str) -> Policy:
        """``every`` (each turn), ``every:K`` (each K-th turn) or ``off``; UserError otherwise."""
        text = (text or EVERY).strip().lower()
        if text == OFF:
            return cls(0)
        if text == EVERY:
            return cls(1)
        name, _, k = text.partition(":")
        if name == EVERY and k.isdigit() and int(k) >= 1:
            return cls(int(k))
        raise UserError(f"--checkpoint takes every, every:K (K a whole number, 1 or more) or off, not {text!r}")

    @property
    def enabled(self) -> bool:
        return self.every > 0

    def wants(self, turn: int) -> bool:
        """Whether the end of ``turn`` gets a checkpoint."""
        return self.enabled and turn >= 1 and turn % self.every == 0


class DatabaseSaver(Protocol):
    """Saves one of the app's databases into a checkpoint's directory (``runtime.pg_checkpoint.PostgresSaver``)."""

    name: str

    def save(self, where: Path) -> int:
        """Write the database's files under ``where``; their bytes. Raises (one line) when it cannot."""
        ...


class CheckpointFailed(Exception):
    """A turn's checkpoint could not be taken (one line); nothing of it is left."""


@dataclass
class CheckpointInfo:
    """One checkpoint as ``info.json`` describes it."""

    turn: int
    path: Path
    taken: float = 0.0  # unix time
    seconds: float = 0.0  # how long taking it took
    trace_bytes: int = 0  # the trace's length when it was taken (every event of turns ≤ ``turn``)
    next_seq: int = 0  # the seq the next event of the episode got
    files: int = 0
    bytes_new: int = 0  # blobs this checkpoint added
    bytes_own: int = 0  # its emulator file and manifests
    variables: dict[str, str] = field(default_factory=dict)
    services: list[str] = field(default_factory=list)
    databases: list[str] = field(default_factory=list)  # what the savers saved beside the workspace ("postgres")

    @property
    def disk_bytes(self) -> int:
        """What this checkpoint costs on disk beyond those before it."""
        return self.bytes_new + self.bytes_own

    def to_dict(self) -> dict[str, Any]:
        return {"turn": self.turn, "taken": self.taken, "seconds": self.seconds, "trace_bytes": self.trace_bytes,
                "next_seq": self.next_seq, "files": self.files, "bytes_new": self.bytes_new,
                "bytes_own": self.bytes_own, "variables": self.variables, "services": self.services,
                "databases": self.databases}

    @classmethod
    def read(cls, path: Path) -> CheckpointInfo:
        data = json.loads((path / INFO_FILE).read_text(encoding="utf-8"))
        return cls(turn=int(data["turn"]), path=path, taken=float(data.get("taken", 0)),
                   seconds=float(data.get("seconds", 0)), trace_bytes=int(data.get("trace_bytes", 0)),
                   next_seq=int(data.get("next_seq", 0)), files=int(data.get("files", 0)),
                   bytes_new=int(data.get("bytes_new", 0)), bytes_own=int(data.get("bytes_own", 0)),
                   variables={str(k): str(v) for k, v in dict(data.get("variables", {})).items()},
                   services=[str(s) for s in data.get("services", [])],
                   databases=[str(d) for d in data.get("databases", [])])


def checkpoints_dir(trace_path: Path) -> Path:
    """Where the checkpoints of the trace at ``trace_path`` live."""
    return sidecar_dir(trace_path) / CHECKPOINTS


def list_checkpoints(trace_path: Path) -> list[CheckpointInfo]:
    """The complete checkpoints of a trace, oldest turn first (a directory without its info.json is skipped:
    it was being written when the process died)."""
    root = checkpoints_dir(trace_path)
    found = []
    if root.is_dir():
        for child in root.iterdir():
            if child.name.isdigit() and (child / INFO_FILE).is_file():
                try:
                    found.append(CheckpointInfo.read(child))
                except (ValueError, KeyError, OSError):
                    continue
    return sorted(found, key=lambda c: c.turn)


def checkpoint_at(trace_path: Path, turn: int) -> CheckpointInfo | None:
    """The checkpoint of ``turn``, or None."""
    return next((c for c in list_checkpoints(trace_path) if c.turn == turn), None)


def unavailable_reason(backend_kind: str, sandbox: str, has_postgres: bool) -> str:
    """Why this episode cannot be checkpointed, or "" when it can."""
    if backend_kind != "emulator":
        return "real Stripe test mode cannot be rewound (its account lives at Stripe)"
    if sandbox != "local":
        return f"the {sandbox} sandbox is not checkpointed yet (only local)"
    if has_postgres:
        missing = missing_tools()
        if missing:
            return f"the environment's PostgreSQL database cannot be dumped here ({missing})"
    return ""


def human_bytes(n: float) -> str:
    """``1.5 MB`` style."""
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} GB"


# ---- taking ----

class WorkspaceScanner:
    """Records a workspace into content-addressed blobs; remembers each file's stat to skip unchanged ones."""

    def __init__(self, workspace: Path, blobs: Path) -> None:
        self.workspace = workspace
        self.blobs = blobs
        self._known: dict[str, tuple[int, int, int, str]] = {}  # path -> (size, mtime_ns, ino, sha)

    def scan(self) -> tuple[dict[str, Any], int]:
        """The workspace's manifest and the bytes of blobs added."""
        entries: dict[str, Any] = {}
        added = 0
        seen: set[str] = set()
        for rel, kind, st in self._walk():
            if kind == "dir":
                entries[rel] = {"kind": "dir", "mode": stat.S_IMODE(st.st_mode)}
            elif kind == "link":
                entries[rel] = {"kind": "link", "target": os.readlink(self.workspace / rel)}
            elif kind == "file":
                seen.add(rel)
                entry, new = self._file(rel, st)
                if entry is not None:
                    entries[rel] = entry
                    added += new
        for gone in set(self._known) - seen:
            del self._known[gone]
        sqlite = {rel for rel, e in entries.items() if e.get("sqlite")}
        for rel in [r for r in entries if any(r.endswith(s) and r[: -len(s)] in sqlite for s in SQLITE_COMPANIONS)]:
            del entries[rel]  # the backup of the database holds what its journal did
        return {"entries": entries}, added

    def _walk(self):  # -> Iterator[tuple[str, str, os.stat_result]]
        stack = [""]
        while stack:
            rel_dir = stack.pop()
            try:
                it = os.scandir(self.workspace / rel_dir if rel_dir else self.workspace)
            except OSError:
                continue
            with it:
                for de in it:
                    rel = f"{rel_dir}/{de.name}" if rel_dir else de.name
                    try:
                        st = de.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if stat.S_ISLNK(st.st_mode):
                        yield rel, "link", st
                    elif stat.S_ISDIR(st.st_mode):
                        if de.name in SKIPPED_DIRS:
                            continue
                        yield rel, "dir", st
                        stack.append(rel)
                    elif stat.S_ISREG(st.st_mode):
                        yield rel, "file", st

    def _file(self, rel: str, st: os.stat_result) -> tuple[dict[str, Any] | None, int]:
        path = self.workspace / rel
        mode = stat.S_IMODE(st.st_mode)
        key = (st.st_size, st.st_mtime_ns, st.st_ino)
        known = self._known.get(rel)
        if known is not None and known[:3] == key:
            return {"kind": "file", "mode": mode, "size": st.st_size, "sha": known[3], "stat": list(key)}, 0
        try:
            with open(path, "rb") as fh:
                head = fh.read(len(SQLITE_MAGIC))
        except OSError:
            return None, 0  # gone or unreadable since the listing
        if head == SQLITE_MAGIC:  # never trusted by stat: its WAL may have changed without it
            return self._database(rel, path, mode)
        try:
            with open(path, "rb") as fh:
                sha = hashlib.file_digest(fh, "sha256").hexdigest()
        except OSError:
            return None, 0
        new = self._store(sha, lambda tmp: shutil.copyfile(path, tmp))
        self._known[rel] = (*key, sha)
        return {"kind": "file", "mode": mode, "size": st.st_size, "sha": sha, "stat": list(key)}, new

    def _database(self, rel: str, path: Path, mode: int) -> tuple[dict[str, Any] | None, int]:
        fd, name = tempfile.mkstemp(dir=self.blobs, prefix=".db-")
        os.close(fd)
        tmp = Path(name)
        try:
            source = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
            target = sqlite3.connect(str(tmp))
            try:
                source.backup(target)
                target.execute("PRAGMA journal_mode=DELETE")
            finally:
                target.close()
                source.close()
            with open(tmp, "rb") as fh:
                sha = hashlib.file_digest(fh, "sha256").hexdigest()
            size = tmp.stat().st_size
            new = self._store(sha, lambda dest: os.replace(tmp, dest))
            return {"kind": "file", "mode": mode, "size": size, "sha": sha, "sqlite": True}, new
        except sqlite3.Error:
            return None, 0  # not a database after all (or locked past the timeout): left out, said by its absence
        finally:
            tmp.unlink(missing_ok=True)

    def _store(self, sha: str, write: Callable[[Path], Any]) -> int:
        """Put a content under its hash unless it is there; the bytes added."""
        dest = blob_path(self.blobs, sha)
        if dest.exists():
            return 0
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
        write(tmp)
        os.chmod(tmp, 0o444)
        os.replace(tmp, dest)  # published whole
        return dest.stat().st_size


def blob_path(blobs: Path, sha: str) -> Path:
    """Where the content with hash ``sha`` is stored."""
    if not _HEX.match(sha):
        raise ValueError(f"not a content hash: {sha!r}")
    return blobs / sha[:2] / sha


class Checkpointer:
    """Takes the episode's checkpoints at turn ends (its ``turn_end_hook`` goes last among the driver's hooks)."""

    def __init__(self, trace_path: Path, workspace: Path, emulator: Emulator, *, policy: Policy,
                 cap_bytes: int = DEFAULT_CAP_MB * 1_000_000, variables: dict[str, str] | None = None,
                 services: list[str] | None = None, on_taken: Callable[[CheckpointInfo, list[int]], Any] | None = None,
                 databases: Sequence[DatabaseSaver] | None = None) -> None:
        self.trace_path = trace_path
        self.root = checkpoints_dir(trace_path)
        self.blobs = self.root / BLOBS
        self.workspace = workspace
        self.emulator = emulator
        self.policy = policy
        self.cap_bytes = cap_bytes
        self.variables = dict(variables or {})
        self.services = list(services or [])
        self.on_taken = on_taken
        self.databases = list(databases or [])
        self.scanner = WorkspaceScanner(workspace, self.blobs)
        self.taken: list[CheckpointInfo] = []
        self.blobs.mkdir(parents=True, exist_ok=True)

    async def turn_end_hook(self, driver: Driver) -> None:
        """After the turn's events are all written: take the turn's checkpoint if the policy wants one."""
        turn = driver.bus.turn
        if not self.policy.wants(turn):
            return
        recorder = driver.recorder
        await driver.bus.drain()
        while recorder is not None and recorder.written != driver.bus.next_seq:  # published meanwhile: not yet written
            await driver.bus.drain()
        # Read together, with nothing awaited in between: the trace's length and the seq that follows it.
        next_seq = driver.bus.next_seq
        if recorder is not None:
            recorder.end_turn()  # the trace is complete and durable up to here
        trace_bytes = self.trace_path.stat().st_size if self.trace_path.exists() else 0
        try:
            info = await asyncio.to_thread(self.take, turn, next_seq, trace_bytes)
        except CheckpointFailed as exc:
            await driver.bus.publish(Service(service="checkpoint", status="log", stream="stderr",
                                             text=f"turn {turn}: no checkpoint: {exc}"))
            return
        pruned = await asyncio.to_thread(self.prune)
        if self.on_taken is not None:
            self.on_taken(info, pruned)

    def take(self, turn: int, next_seq: int, trace_bytes: int | None = None) -> CheckpointInfo:
        """Take the checkpoint of ``turn`` now (blocking): emulator, databases, workspace, info last (it marks it
        complete). CheckpointFailed, and nothing of it left, when a database cannot be saved."""
        # the emulator takes a second to import; listing checkpoints (replay, the TUI) never loads it
        from stripebench_emulator import save_checkpoint

        started = time.monotonic()
        where = self.root / str(turn)
        if where.exists():
            shutil.rmtree(where)
        where.mkdir(parents=True)
        own = save_checkpoint(self.emulator, where / EMULATOR_FILE)
        for database in self.databases:
            try:
                own += database.save(where)
            except Exception as exc:  # noqa: BLE001 - a saver's failure is one line; the episode goes on
                shutil.rmtree(where, ignore_errors=True)
                raise CheckpointFailed(str(exc) or type(exc).__name__) from None
        manifest, added = self.scanner.scan()
        text = json.dumps(manifest, separators=(",", ":"))
        (where / WORKSPACE_FILE).write_text(text, encoding="utf-8")
        if trace_bytes is None:
            trace_bytes = self.trace_path.stat().st_size if self.trace_path.exists() else 0
        info = CheckpointInfo(turn=turn, path=where, taken=time.time(), trace_bytes=trace_bytes, next_seq=next_seq,
                              files=sum(1 for e in manifest["entries"].values() if e["kind"] == "file"),
                              bytes_new=added, bytes_own=own + len(text), variables=self.variables,
                              services=self.services, databases=[d.name for d in self.databases])
        info.seconds = round(time.monotonic() - started, 4)
        _write_atomic(where / INFO_FILE, json.dumps(info.to_dict(), indent=1))
        self.taken.append(info)
        return info

    def prune(self) -> list[int]:
        """Remove the oldest checkpoints (never the newest) while the directory is over the cap; their turns."""
        pruned: list[int] = []
        while du(self.root) > self.cap_bytes:
            existing = list_checkpoints(self.trace_path)
            if len(existing) <= 1:
                break
            oldest = existing[0]
            shutil.rmtree(oldest.path)
            pruned.append(oldest.turn)
            collect_blobs(self.trace_path)
        return pruned


def collect_blobs(trace_path: Path) -> int:
    """Delete the blobs no checkpoint's workspace uses; the bytes freed."""
    root = checkpoints_dir(trace_path)
    used: set[str] = set()
    for info in list_checkpoints(trace_path):
        manifest = json.loads((info.path / WORKSPACE_FILE).read_text(encoding="utf-8"))
        used.update(e["sha"] for e in manifest["entries"].values() if e["kind"] == "file")
    freed = 0
    for blob in (root / BLOBS).glob("*/*"):
        if blob.name not in used and not blob.name.startswith("."):
            freed += blob.stat().st_size
            blob.unlink()
    return freed


def du(path: Path) -> int:
    """Bytes of the regular files under ``path``."""
    total = 0
    for base, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(base, name)).st_size
            except OSError:
                pass
    return total


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


# ---- restoring ----

def restore_workspace(info: CheckpointInfo, workspace: Path, remap: list[tuple[str, str]] | None = None) -> int:
    """Rebuild the checkpoint's workspace at ``workspace`` (which must not exist); the number of files.

    ``remap`` pairs (old text, new text) are replaced in files up to ``REMAP_LIMIT`` bytes that contain them:
    the old episode's absolute paths become the new episode's.
    """
    manifest = json.loads((info.path / WORKSPACE_FILE).read_text(encoding="utf-8"))
    blobs = info.path.parent / BLOBS
    workspace.mkdir(parents=True)
    pairs = [(old.encode(), new.encode()) for old, new in (remap or []) if old and old != new]
    files = 0
    entries = manifest["entries"]
    for rel in sorted(entries, key=lambda r: r.count("/")):  # parents before children
        entry = entries[rel]
        target = workspace / _safe_relative(rel)
        if entry["kind"] == "dir":
            target.mkdir(exist_ok=True)
        elif entry["kind"] == "link":
            target.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(entry["target"], target)
        elif entry["kind"] == "file":
            target.parent.mkdir(parents=True, exist_ok=True)
            _copy_blob(blob_path(blobs, entry["sha"]), target, pairs, entry.get("size", 0), bool(entry.get("sqlite")))
            os.chmod(target, entry.get("mode", 0o644) | stat.S_IWUSR)
            files += 1
    for rel, entry in entries.items():  # directory modes last: a read-only directory was filled first
        if entry["kind"] == "dir":
            os.chmod(workspace / rel, entry.get("mode", 0o755) | stat.S_IWUSR | stat.S_IXUSR)
    return files


def _safe_relative(rel: str) -> str:
    parts = rel.split("/")
    if rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise UserError(f"a checkpoint names a workspace path that leaves the workspace: {rel!r}")
    return rel


def _copy_blob(blob: Path, target: Path, pairs: list[tuple[bytes, bytes]], size: int, is_db: bool) -> None:
    if pairs and not is_db and size <= REMAP_LIMIT:
        data = blob.read_bytes()
        if any(old in data for old, _ in pairs):
            for old, new in pairs:
                data = data.replace(old, new)
            target.write_bytes(data)
            return
    with open(blob, "rb") as src, open(target, "wb") as dst:
        try:
            fcntl.ioctl(dst.fileno(), _FICLONE, src.fileno())
            return
        except OSError as exc:
            if exc.errno not in (errno.EOPNOTSUPP, errno.ENOTTY, errno.EXDEV, errno.EINVAL, errno.ENOSYS):
                raise
        shutil.copyfileobj(src, dst, 1 << 20)


def restore_emulator(info: CheckpointInfo, state: Path) -> None:
    """Make ``state`` (a state file to start the emulator on) from the checkpoint."""
    # the emulator (a second to import), only to restore its state
    from stripebench_emulator import restore_checkpoint

    restore_checkpoint(info.path / EMULATOR_FILE, state)


__all__ = ["CHECKPOINTS", "CheckpointFailed", "CheckpointInfo", "Checkpointer", "DatabaseSaver", "DEFAULT_CAP_MB",
           "Policy", "WorkspaceScanner", "checkpoint_at", "checkpoints_dir", "collect_blobs", "du", "human_bytes",
           "list_checkpoints", "restore_emulator", "restore_workspace", "unavailable_reason"]
