"""Object storage: an in-memory map of Stripe objects with per-request transactions, optionally mirrored to SQLite.

Every object (events included) lives under ``(object type, id)``. State changes only through ``put``/``delete``
(``get`` returns deep copies; ``borrow``, for handlers, shallow ones); a failed request rolls back its journal,
which is how "state unchanged after an error" holds for every endpoint without each handler thinking about it.

Stored objects never change in place (responses, event snapshots and list pages share their nested values). ``put``
stores a shallow copy, so the rule for a handler is: once an object is saved, replace its nested values rather than
change them (``inv["_lines"] = [*inv["_lines"], line]``, not ``inv["_lines"].append(line)``); top-level keys may
be set freely. A deep copy per save cost a sixth of the emulator's CPU per request. With ``checks`` (environment
``STRIPEBENCH_EMULATOR_CHECKS=1``, which the test suite sets) every save also keeps a deep copy, and a transaction
whose saved objects changed in place since, or hold what JSON cannot (a tuple), raises ``OwnershipError`` and is
rolled back.
"""

from __future__ import annotations

import bisect
import copy
import json
import marshal
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, cast

import orjson

from stripebench_emulator.model.problems import BadStateFile

_MISSING = object()
CHECKS_VARIABLE = "STRIPEBENCH_EMULATOR_CHECKS"
_VERIFY_ON_SAVE = 200  # with checks, earlier saves are also verified at each save while a transaction has fewer


class OwnershipError(AssertionError):
    """An object changed in place after it was saved (an emulator bug; only with ``Store.checks``)."""


# Any: JSON-like data of whatever shape the caller holds, given back in the same shape
def clone(obj: Any) -> Any:
    """A deep copy of JSON-like data, in C: an orjson round trip (a third faster than marshal's).

    Objects are JSON anyway (the state file stores them as JSON), so the round trip changes nothing; what JSON
    cannot carry exactly (tuples, non-string keys, integers beyond 64 bits) goes through marshal, and what marshal
    cannot carry through ``copy.deepcopy``.
    """
    try:
        if _json_exact(obj):
            return orjson.loads(orjson.dumps(obj))
    except TypeError:  # orjson.JSONEncodeError included
        pass
    try:
        return marshal.loads(marshal.dumps(obj))
    except ValueError:
        return copy.deepcopy(obj)


def _json_exact(obj: object) -> bool:
    """A dict or list at the top (what the store keeps); nested tuples come back as lists, as from the state file."""
    return type(obj) is dict or type(obj) is list


def _key(obj: dict[str, Any], seqs: dict[str, int]) -> tuple[int, int]:
    return (obj.get("created", 0), seqs.get(obj["id"], 0))


class _Transaction:
    """``with store.transaction():`` as a plain object (a generator-based context manager costs twice as much, and
    every API request opens one)."""

    __slots__ = ("store", "seq_before")

    def __init__(self, store: Store) -> None:
        self.store = store
        self.seq_before = 0

    def __enter__(self) -> None:
        self.seq_before = self.store.begin()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> Literal[False]:
        self.store.end(self.seq_before, failed=exc_type is not None)
        return False


class Store:
    """Objects by type and id, idempotency records and small metadata, with rollback and optional SQLite persistence."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.objects: dict[str, dict[str, dict[str, Any]]] = {}
        self.idempotency: dict[str, dict[str, Any]] = {}
        self.meta: dict[str, Any] = {}
        self.seq = 0
        # Creation order, by type then id: what orders objects created in the same second. Kept here, not in the
        # objects, so an object with no internal fields is served and snapshotted as it is stored, without a copy.
        self.seqs: dict[str, dict[str, int]] = {}
        self.writes = 0  # puts and deletes so far: equal counts mean nothing was written in between
        self.lock = threading.RLock()
        self._journal: list[tuple[str, str, Any]] | None = None
        self._idem_journal: list[str] = []
        self.checks = os.environ.get(CHECKS_VARIABLE) == "1"
        self._saved: list[tuple[dict[str, Any], Any]] = []  # (stored, its deep copy), with checks
        self._db: sqlite3.Connection | None = None
        self._order: dict[str, list[dict[str, Any]]] = {}  # newest first, rebuilt after a write to the kind
        self._asc: dict[str, list[dict[str, Any]]] = {}
        self._asc_keys: dict[str, list[tuple[int, int]]] = {}
        # Called before each write so small state (id counters, clock) is saved with the objects it produced.
        self.meta_source: Callable[[], dict[str, Any]] | None = None
        if path is not None:
            try:
                self._open(Path(path))
            except (sqlite3.Error, OSError, ValueError) as exc:
                raise BadStateFile(f"cannot use {path} as the emulator's state file: {exc}") from None

    # -- reads -------------------------------------------------------------------------------------------------
    def get(self, kind: str, object_id: str) -> dict[str, Any] | None:
        """A copy of the object, or None."""
        obj = self.objects.get(kind, {}).get(object_id)
        return clone(obj) if obj is not None else None

    def borrow(self, kind: str, object_id: str) -> dict[str, Any] | None:
        """A shallow copy of the object, or None: for a handler inside a transaction, which may set its top-level
        keys but must replace, not change, its nested values (the rule for saved objects; see the module's doc)."""
        obj = self.objects.get(kind, {}).get(object_id)
        if obj is None:
            return None
        if self.checks and self._journal is not None:
            self._saved.append((obj, clone(obj)))
        return dict(obj)

    def peek(self, kind: str, object_id: str) -> dict[str, Any] | None:
        """The stored object itself, or None: read it, never change it (``get`` + ``put`` for that)."""
        bucket = self.objects.get(kind)
        return bucket.get(object_id) if bucket is not None else None

    def all(self, kind: str) -> list[dict[str, Any]]:
        """Copies of every object of a type, newest first (by ``created`` then creation order)."""
        return [clone(o) for o in self.scan(kind)]

    def scan(self, kind: str) -> list[dict[str, Any]]:
        """The stored objects themselves, newest first: read them, never change them (use ``get`` + ``put``)."""
        cached = self._order.get(kind)
        if cached is None:
            cached = self._order[kind] = self._ascending(kind)[::-1]
        return cached

    def newest_first(self, kind: str) -> Iterator[dict[str, Any]]:
        """Like ``scan`` but lazily, without building the reversed list (for one pass that may stop early)."""
        cached = self._order.get(kind)
        return iter(cached) if cached is not None else reversed(self._ascending(kind))

    def _ascending(self, kind: str) -> list[dict[str, Any]]:
        # Oldest first, kept up to date by put/delete (a new object usually just appends), so a write costs
        # O(log n) instead of a full re-sort before the next list.
        rows = self._asc.get(kind)
        if rows is None:
            seqs = self.seqs.get(kind, {})
            rows = self._asc[kind] = sorted(self.objects.get(kind, {}).values(), key=lambda o: _key(o, seqs))
            self._asc_keys[kind] = [_key(o, seqs) for o in rows]
        return rows

    def seq_of(self, kind: str, object_id: str) -> int:
        """The object's place in creation order (1 for the store's first object); 0 if it was never stored."""
        return self.seqs.get(kind, {}).get(object_id, 0)

    def _index_put(self, kind: str, old: object, new: dict[str, Any] | None) -> None:
        self._order.pop(kind, None)
        rows = self._asc.get(kind)
        if rows is None:
            return
        keys = self._asc_keys[kind]
        seqs = self.seqs.get(kind, {})
        if old is not _MISSING and old is not None:
            i = bisect.bisect_left(keys, _key(cast("dict[str, Any]", old), seqs))  # a stored object
            while i < len(rows) and rows[i] is not old:
                i += 1
            if i < len(rows):
                if new is not None and _key(new, seqs) == keys[i]:
                    rows[i] = new
                    return
                del rows[i], keys[i]
        if new is not None:
            k = _key(new, seqs)
            if not keys or k >= keys[-1]:
                rows.append(new)
                keys.append(k)
            else:
                i = bisect.bisect_right(keys, k)
                rows.insert(i, new)
                keys.insert(i, k)

    def _forget_order(self) -> None:
        self._order.clear()
        self._asc.clear()
        self._asc_keys.clear()

    # -- writes ------------------------------------------------------------------------------------------------
    def put(self, obj: dict[str, Any], copy: bool = True) -> dict[str, Any]:
        """Insert or replace ``obj`` (keyed by its ``object`` and ``id``); returns it.

        ``copy=False`` stores ``obj`` itself: only for a fresh object that no one changes afterwards (events).
        """
        kind, object_id = obj["object"], obj["id"]
        bucket = self.objects.get(kind)
        if bucket is None:
            bucket = self.objects[kind] = {}
        seqs = self.seqs.get(kind)
        if seqs is None:
            seqs = self.seqs[kind] = {}
        if object_id not in seqs:  # kept through deletes: a deleted object's stub keeps its place
            self.seq += 1
            seqs[object_id] = self.seq
        old = bucket.get(object_id, _MISSING)
        self._record(kind, object_id, old)
        # shallow: ``obj``'s nested values are shared with the stored copy from here on (see the module's doc)
        stored = bucket[object_id] = dict(obj) if copy else obj
        if self.checks and self._journal is not None:
            if len(self._saved) < _VERIFY_ON_SAVE:  # the error then points near the change; all are checked at commit
                self.verify()
            self._saved.append((stored, clone(stored)))
        if kind in self._order or kind in self._asc:  # else no order of this kind is kept yet (see _index_put)
            self._index_put(kind, old, stored)
        return obj

    def delete(self, kind: str, object_id: str) -> None:
        """Remove an object if present."""
        bucket = self.objects.get(kind, {})
        if object_id in bucket:
            old = bucket.pop(object_id)
            self._record(kind, object_id, old)
            self._index_put(kind, old, None)

    def put_idempotent(self, key: str, record: dict[str, Any]) -> None:
        """Remember a response under an idempotency key."""
        self.idempotency[key] = record
        self._idem_journal.append(key)

    def prune_idempotency(self, older_than: int) -> None:
        """Forget idempotency records created before ``older_than`` (Stripe keeps keys for 24 hours)."""
        stale = [k for k, r in self.idempotency.items() if r.get("created", 0) < older_than]
        for key in stale:
            del self.idempotency[key]
        if stale and self._db is not None:
            with self._db:
                self._db.executemany("DELETE FROM idempotency WHERE key=?", [(k,) for k in stale])

    def _record(self, kind: str, object_id: str, previous: object) -> None:
        self.writes += 1
        if self._journal is not None:
            self._journal.append((kind, object_id, previous))

    # -- transactions --------------------------------------------------------------------------------------------
    def transaction(self) -> _Transaction:
        """Apply everything inside, or nothing if it raises; persisted on success."""
        return _Transaction(self)

    def begin(self) -> int:
        """Open a transaction by hand (``transaction()`` does it on entry): takes the lock, which ``end`` releases;
        returns what ``end`` needs to roll back to."""
        self.lock.__enter__()
        self._journal = []
        self._saved = []
        return self.seq

    def end(self, seq_before: int, failed: bool) -> None:
        """Close the transaction ``begin`` opened: roll back if ``failed`` (or if ``verify`` finds an object changed
        in place, which then raises), else commit; releases the lock."""
        if not failed and self.checks:
            try:
                self.verify()
            except OwnershipError:
                self._rollback(seq_before)
                raise
        if failed:
            self._rollback(seq_before)
        else:
            self._commit()

    def verify(self) -> None:
        """Raise ``OwnershipError`` if an object saved in this transaction (with ``checks``) changed in place since
        it was saved, or holds a value JSON has no exact form for (a tuple: the state file would turn it into a
        list)."""
        for stored, snapshot in self._saved:
            if stored != snapshot:
                changed = sorted(k for k in snapshot.keys() | stored.keys() if stored.get(k) != snapshot.get(k))
                raise OwnershipError(f"{stored.get('object')} {stored.get('id')}: {', '.join(changed)} changed in place "
                                     "after it was saved, or holds a tuple (replace nested values, don't change them)")

    def _commit(self) -> None:
        journal, self._journal = self._journal or [], None
        self._saved = []
        try:
            if self._db is not None or self._idem_journal:
                self._persist({(k, i) for k, i, _ in journal})
        finally:
            self.lock.__exit__(None, None, None)

    def _rollback(self, seq_before: int) -> None:
        self._saved = []
        try:
            self._forget_order()
            for kind, object_id, previous in reversed(self._journal or []):
                if previous is _MISSING:
                    self.objects.get(kind, {}).pop(object_id, None)
                    if self.seqs.get(kind, {}).get(object_id, 0) > seq_before:  # numbered by this transaction
                        del self.seqs[kind][object_id]
                else:
                    self.objects.setdefault(kind, {})[object_id] = previous
            self.seq = seq_before
            self._journal = None
        finally:
            self.lock.__exit__(None, None, None)

    def flush_idempotency(self) -> None:
        """Write idempotency records and metadata added outside a transaction."""
        self._persist(set())

    def clear(self) -> None:
        """Forget every object and idempotency record (``/_emulator/reset``)."""
        with self.lock:
            self.objects.clear()
            self.seqs.clear()
            self._forget_order()
            self.idempotency.clear()
            self.seq = 0
            if self._db is not None:
                with self._db:
                    self._db.execute("DELETE FROM objects")
                    self._db.execute("DELETE FROM idempotency")
                    self._db.execute("DELETE FROM meta")

    # -- SQLite ----------------------------------------------------------------------------------------------------
    def _open(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS objects (kind TEXT, id TEXT, body TEXT, PRIMARY KEY (kind, id))")
        self._db.execute("CREATE TABLE IF NOT EXISTS idempotency (key TEXT PRIMARY KEY, body TEXT)")
        self._db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, body TEXT)")
        for kind, object_id, body in self._db.execute("SELECT kind, id, body FROM objects"):
            obj = json.loads(body)
            seq = obj.pop("_seq", 0)  # the file keeps each object's place in creation order with it
            self.objects.setdefault(kind, {})[object_id] = obj
            self.seqs.setdefault(kind, {})[object_id] = seq
            self.seq = max(self.seq, seq)
        for key, body in self._db.execute("SELECT key, body FROM idempotency"):
            self.idempotency[key] = json.loads(body)
        for key, body in self._db.execute("SELECT key, body FROM meta"):
            self.meta[key] = json.loads(body)

    def _persist(self, touched: set[tuple[str, str]]) -> None:
        if self._db is None:
            self._idem_journal.clear()
            return
        if self.meta_source is not None:
            self.meta.update(self.meta_source())
        with self._db:
            self._db.execute("BEGIN")
            for kind, object_id in touched:
                obj = self.objects.get(kind, {}).get(object_id)
                if obj is None:
                    self._db.execute("DELETE FROM objects WHERE kind=? AND id=?", (kind, object_id))
                else:
                    body = json.dumps({**obj, "_seq": self.seq_of(kind, object_id)})
                    self._db.execute("INSERT OR REPLACE INTO objects VALUES (?, ?, ?)", (kind, object_id, body))
            for key in self._idem_journal:
                self._db.execute("INSERT OR REPLACE INTO idempotency VALUES (?, ?)", (key, json.dumps(self.idempotency[key])))
            for key, value in self.meta.items():
                self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(value)))
        self._idem_journal.clear()

    def take_meta(self, key: str) -> Any:
        """Remove the metadata entry ``key`` (from the state file too) and return it; None when absent."""
        with self.lock:
            value = self.meta.pop(key, None)
            if self._db is not None:
                with self._db:
                    self._db.execute("DELETE FROM meta WHERE key=?", (key,))
            return value

    def backup(self, dest: Path, extra_meta: dict[str, Any] | None = None) -> None:
        """Write a consistent copy of the whole store to a new SQLite file ``dest`` (same tables as the state
        file), with ``extra_meta`` added to its metadata. Holds the lock, so no transaction is half in the copy.

        With a state file, SQLite's online backup API copies it page by page (after writing what metadata
        changed since the last commit); without one, every object is written out as the state file would hold it.
        """
        with self.lock:
            dst = sqlite3.connect(str(dest), isolation_level=None)
            try:
                if self._db is not None:
                    self._persist(set())
                    self._db.backup(dst)
                else:
                    if self.meta_source is not None:
                        self.meta.update(self.meta_source())
                    self._write_all(dst)
                dst.execute("PRAGMA journal_mode=DELETE")  # one self-contained file, whatever the source used
                with dst:
                    dst.execute("BEGIN")
                    for key, value in (extra_meta or {}).items():
                        dst.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(value)))
            finally:
                dst.close()

    def _write_all(self, dst: sqlite3.Connection) -> None:
        dst.execute("CREATE TABLE IF NOT EXISTS objects (kind TEXT, id TEXT, body TEXT, PRIMARY KEY (kind, id))")
        dst.execute("CREATE TABLE IF NOT EXISTS idempotency (key TEXT PRIMARY KEY, body TEXT)")
        dst.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, body TEXT)")
        with dst:
            dst.execute("BEGIN")
            dst.executemany("INSERT OR REPLACE INTO objects VALUES (?, ?, ?)",
                            [(kind, object_id, json.dumps({**obj, "_seq": self.seq_of(kind, object_id)}))
                             for kind, bucket in self.objects.items() for object_id, obj in bucket.items()])
            dst.executemany("INSERT OR REPLACE INTO idempotency VALUES (?, ?)",
                            [(k, json.dumps(v)) for k, v in self.idempotency.items()])
            dst.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", [(k, json.dumps(v)) for k, v in self.meta.items()])

    def close(self) -> None:
        """Close the SQLite file, if any."""
        if self._db is not None:
            self._db.close()
            self._db = None
