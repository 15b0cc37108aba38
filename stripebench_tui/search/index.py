"""Searching episodes: a SQLite index per episode, kept beside its trace, and the same search without one.

``documents(events)`` turns an episode's events into what a query can find: findings (recorded, or derived by the
detectors for a trace that recorded none), Stripe requests, tool calls, verdict changes, and tool outputs. The index
(``search-index.sqlite3`` beside ``trace.jsonl``: the only file search ever writes into an episode) holds them in two
tables, the outputs in an FTS5 table with the trigram tokenizer so that a substring is found without reading every
output; it records the trace's size and modification time and is rebuilt when they change. ``scan`` answers the same
query by reading the trace, for a check of the index and for a folder that cannot be written.
"""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import closing
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

from stripebench_tui.core.events import Event, Finding, GraderVerdict, Header, StripeRequest, ToolCall, ToolResult
from stripebench_tui.findings.derived import Deriver
from stripebench_tui.formats.open import open_episode
from stripebench_tui.search.query import Clause, status_matches

INDEX_NAME = "search-index.sqlite3"
SCHEMA = "1"
CONTEXT_CHARS = 160
PROBE_CHARS = 48  # of a text term, given to the trigram index (the rest is matched on the rows it returns)


@dataclass(frozen=True)
class Doc:
    kind: str  # finding | request | tool | verdict | text
    key: str  # the detector, "METHOD PATH", the tool, the criterion (lowercase but for requests); "" for text
    status: str  # a request's HTTP status, a verdict's status
    turn: int
    context: str  # one line for a hit (for text: the whole output)


@dataclass(frozen=True)
class SearchHit:
    turn: int
    kind: str
    context: str


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= CONTEXT_CHARS else line[: CONTEXT_CHARS - 1] + "…"


def documents(events: Iterable[Event], header: Header | None = None) -> Iterator[Doc]:
    """What a query can find in an episode's events, in order (derived findings at the end when none were recorded)."""
    deriver = Deriver(header)
    recorded = False
    verdicts: dict[str, str] = {}
    for ev in events:
        deriver.feed(ev)
        if isinstance(ev, Finding):
            recorded = True
            yield Doc("finding", ev.detector.lower(), "", ev.turn, _one_line(f"{ev.detector}: {ev.message}"))
        elif isinstance(ev, StripeRequest):
            error = f" {ev.error_type}" + (f" ({ev.error_code})" if ev.error_code else "") if ev.error_type else ""
            yield Doc("request", f"{ev.method.upper()} {ev.path}", str(ev.status), ev.turn,
                      _one_line(f"{ev.method.upper()} {ev.path} → {ev.status}{error}" + (f" [{ev.source}]" if ev.source else "")))
        elif isinstance(ev, ToolCall):
            args = json.dumps(ev.arguments, ensure_ascii=False, sort_keys=True)
            yield Doc("tool", ev.tool.lower(), "", ev.turn, _one_line(f"{ev.tool} {args}"))
        elif isinstance(ev, GraderVerdict):
            status = ev.status.lower()
            if verdicts.get(ev.criterion) != status:  # a change, not a re-evaluation with the same result
                verdicts[ev.criterion] = status
                yield Doc("verdict", ev.criterion.lower(), status, ev.turn, _one_line(f"{ev.criterion}: {status}"))
        elif isinstance(ev, ToolResult) and ev.output:
            yield Doc("text", "", "", ev.turn, ev.output)
    if not recorded:
        for f in deriver.findings:
            yield Doc("finding", f.detector.lower(), "", f.turn, _one_line(f"{f.detector}: {f.message} (derived)"))


def _text_line(body: str, needle: str) -> str:
    lowered = body.lower()
    at = lowered.find(needle)
    if at < 0:
        return _one_line(body)
    start = lowered.rfind("\n", 0, at) + 1
    end = lowered.find("\n", at)
    return _one_line(body[start : end if end >= 0 else len(body)])


def match_doc(clause: Clause, doc: Doc) -> bool:
    """Whether ``doc`` is a hit of ``clause`` (the plain scan's rule; the index asks SQLite the same)."""
    if doc.kind != clause.kind:
        return False
    if clause.kind == "text":
        return clause.value in doc.context.lower()
    if clause.kind == "request":
        method_path = clause.value if " " in clause.value.strip() else f"* {clause.value}"
        method, _, path = method_path.strip().partition(" ")
        doc_method, _, doc_path = doc.key.partition(" ")
        ok = fnmatchcase(doc_method, method.upper()) and fnmatchcase(doc_path, path.strip())
        return ok and ("status" not in clause.qualifiers or status_matches(clause.qualifiers["status"], int(doc.status or 0)))
    if clause.kind == "verdict":
        return doc.status == clause.value and fnmatchcase(doc.key, clause.qualifiers.get("criterion", "*").lower())
    return fnmatchcase(doc.key, clause.value)


def scan(trace_path: Path, clauses: list[Clause]) -> list[SearchHit]:
    """The hits of ``clauses`` in one trace by reading it whole (no index); [] unless every clause has a hit."""
    trace = open_episode(trace_path)
    per_clause: list[list[SearchHit]] = [[] for _ in clauses]
    for doc in documents(trace.iter_events(), trace.header):
        for i, clause in enumerate(clauses):
            if match_doc(clause, doc):
                context = _text_line(doc.context, clause.value) if doc.kind == "text" else doc.context
                per_clause[i].append(SearchHit(doc.turn, doc.kind, context))
    return _combine(per_clause)


def _combine(per_clause: list[list[SearchHit]]) -> list[SearchHit]:
    if not all(per_clause):
        return []
    return sorted({h for hits in per_clause for h in hits}, key=lambda h: (h.turn, h.kind, h.context))


class EpisodeIndex:
    """The index of one episode: opened fresh, built (or rebuilt) when the trace changed since."""

    def __init__(self, trace_path: Path) -> None:
        self.trace_path = trace_path
        self.path = trace_path.with_name(INDEX_NAME)

    def _stamp(self) -> dict[str, str]:
        st = self.trace_path.stat()
        return {"schema": SCHEMA, "size": str(st.st_size), "mtime_ns": str(st.st_mtime_ns)}

    def current(self) -> bool:
        if not self.path.is_file():
            return False
        try:
            with closing(sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)) as db:  # `with` alone only commits
                meta = dict(db.execute("SELECT key, value FROM meta"))
        except sqlite3.Error:
            return False
        return meta == self._stamp()

    def build(self) -> None:
        """Write the index beside the trace (through a temporary file, so a reader never sees half of one)."""
        stamp = self._stamp()
        trace = open_episode(self.trace_path)
        fd, tmp = tempfile.mkstemp(prefix=".search-", suffix=".tmp", dir=self.path.parent)
        os.close(fd)
        try:
            with closing(sqlite3.connect(tmp)) as db, db:  # closed, and committed on leaving
                db.executescript(
                    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);"
                    "CREATE TABLE docs (kind TEXT, key TEXT, path TEXT, method TEXT, status TEXT, turn INTEGER, context TEXT);"
                    "CREATE INDEX docs_kind_key ON docs (kind, key);"
                    "CREATE VIRTUAL TABLE outputs USING fts5(body, turn UNINDEXED, tokenize='trigram');")
                for doc in documents(trace.iter_events(), trace.header):
                    if doc.kind == "text":
                        db.execute("INSERT INTO outputs (body, turn) VALUES (?, ?)", (doc.context, doc.turn))
                    else:
                        method, _, path = doc.key.partition(" ") if doc.kind == "request" else ("", "", "")
                        db.execute("INSERT INTO docs VALUES (?, ?, ?, ?, ?, ?, ?)",
                                   (doc.kind, doc.key, path, method, doc.status, doc.turn, doc.context))
                db.executemany("INSERT INTO meta VALUES (?, ?)", stamp.items())
            os.replace(tmp, self.path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)

    def search(self, clauses: list[Clause]) -> list[SearchHit]:
        with closing(sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)) as db:
            per_clause = [self._clause_hits(db, c) for c in clauses]
        return _combine(per_clause)

    @staticmethod
    def _clause_hits(db: sqlite3.Connection, clause: Clause) -> list[SearchHit]:
        if clause.kind == "text":
            if "%" in clause.value or "_" in clause.value:  # LIKE's own wildcards: read them all, match below
                rows = db.execute("SELECT turn, body FROM outputs")
            else:  # the trigram index answers this without reading every output; it looks up each trigram of the
                # pattern, so a long term costs as many lookups: its first PROBE_CHARS narrow the rows, the check
                # below (which every row passes through anyway) matches the whole term
                rows = db.execute("SELECT turn, body FROM outputs WHERE body LIKE ?",
                                  (f"%{clause.value[:PROBE_CHARS]}%",))
            return [SearchHit(int(turn), "text", _text_line(body, clause.value)) for turn, body in rows
                    if clause.value in body.lower()]  # LIKE folds ASCII case only: the same rule as the scan
        if clause.kind == "request":
            method_path = clause.value if " " in clause.value.strip() else f"* {clause.value}"
            method, _, path = method_path.strip().partition(" ")
            rows = db.execute("SELECT turn, status, context FROM docs WHERE kind = 'request' AND method GLOB ? "
                              "AND path GLOB ?", (method.upper(), path.strip()))
            status = clause.qualifiers.get("status")
            return [SearchHit(int(t), "request", ctx) for t, s, ctx in rows
                    if status is None or status_matches(status, int(s or 0))]
        if clause.kind == "verdict":
            rows = db.execute("SELECT turn, context FROM docs WHERE kind = 'verdict' AND status = ? AND key GLOB ?",
                              (clause.value, clause.qualifiers.get("criterion", "*").lower()))
            return [SearchHit(int(t), "verdict", ctx) for t, ctx in rows]
        rows = db.execute("SELECT turn, context FROM docs WHERE kind = ? AND key GLOB ?", (clause.kind, clause.value))
        return [SearchHit(int(t), clause.kind, ctx) for t, ctx in rows]


__all__ = ["Doc", "EpisodeIndex", "SearchHit", "INDEX_NAME", "documents", "match_doc", "scan"]
