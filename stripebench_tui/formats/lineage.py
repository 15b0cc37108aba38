"""An episode's lineage: the episode it was forked from (and at which turn), and the forks made from it, theirs too.

A fork records its parent in its header (``extra.forked_from = {"trace", "turn", "mode"}``, written by
``runtime.fork`` and ``runtime.restore``) and, when it starts, one line in its parent's ``trace.jsonl.d/forks.jsonl``
(``record_child``), so a fork made anywhere is found again. A resume continues the same trace: its ``resume``
events say from which turn each new process went on. ``read_lineage(path)`` puts this together for one episode:
its parent, and the tree of forks found beside it (sibling episode directories), under its ``forks/`` and
``bisect/`` folders and in that file, each with its score, whether it ended, and its first recorded finding.

Only headers and tails are read to find the forks; each branch shown is then read once, to its first finding.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stripebench_tui.core.events import EpisodeEnd, EpisodeResume, Event, Finding
from stripebench_tui.core.trace import EPISODE_TRACE, Trace, TraceError, open_trace
from stripebench_tui.core.trace_check import LineError, parse_event
from stripebench_tui.core.trace_writer import sidecar_dir

FORKS_DIR = "forks"  # EPISODE/forks/<name>/: forks the TUI starts from this episode
BISECT_DIR = "bisect"  # EPISODE/bisect/turn-T-run-K/: the forks `stripebench bisect` makes
CHILDREN_FILE = "forks.jsonl"  # in the parent's sidecar directory: one line per fork started from it
MAX_DEPTH = 32  # forks of forks followed this deep (a loop of hand-edited headers cannot recurse forever)


@dataclass
class Branch:
    """One episode of a lineage tree: where it forked from its parent, how it ended, and its own forks."""

    path: Path  # its trace file
    turn: int | None = None  # the parent's turn it was forked at (None: the root, or a whole re-run)
    mode: str = ""  # "restore" (from a checkpoint), "" (re-executed), or "rerun"
    ended: bool = False
    score: float | None = None
    passed: bool | None = None
    first_finding: str = ""  # "turn N · detector: message" of its first recorded finding, or ""
    resumed_at: list[int] = field(default_factory=list)  # the turns a `stripebench resume` went on from
    children: list[Branch] = field(default_factory=list)

    @property
    def name(self) -> str:
        """The episode directory's name (the trace's own name for a loose trace file)."""
        return self.path.parent.name if self.path.name == EPISODE_TRACE else self.path.name

    @property
    def outcome(self) -> str:
        """"passed 1.00", "failed 0.40", "unscored", or "did not end"."""
        if not self.ended:
            return "did not end"
        if self.score is None:
            return "unscored"
        return f"{'passed' if self.passed else 'failed'} {self.score:.2f}"

    def walk(self) -> Iterator[Branch]:
        """This branch, then every fork under it, depth first."""
        yield self
        for child in self.children:
            yield from child.walk()


@dataclass
class Lineage:
    """One episode's place in its family: ``parent`` (None for an original run) and the tree under it (``root``)."""

    root: Branch
    parent: Path | None = None
    parent_turn: int | None = None
    parent_exists: bool = False

    @property
    def forks(self) -> int:
        """How many forks are under this episode (forks of forks included)."""
        return sum(1 for _ in self.root.walk()) - 1


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:
        return path.absolute()


def forked_from(extra: dict[str, Any]) -> tuple[Path | None, int | None, str]:
    """(parent trace, turn, mode) from a header's ``extra`` (``forked_from``); (None, None, "") for an original run."""
    info = extra.get("forked_from") if isinstance(extra, dict) else None
    if not isinstance(info, dict) or not isinstance(info.get("trace"), str) or not info["trace"]:
        return None, None, ""
    turn = info.get("turn")
    mode = info["mode"] if isinstance(info.get("mode"), str) else ""
    if turn == "all":
        return Path(info["trace"]), None, "rerun"
    return Path(info["trace"]), turn if isinstance(turn, int) and not isinstance(turn, bool) else None, mode


def record_child(parent: Path, child: Path, turn: int | None, mode: str = "") -> None:
    """Note in ``parent``'s sidecar directory that ``child`` was forked from it at ``turn`` (best effort: a parent
    that cannot be written to, such as a bundled sample, is found through its children's headers instead)."""
    parent, child = _resolved(parent), _resolved(child)
    if parent == child:
        return  # a resume goes on in the same trace: it is not a fork of itself
    line = json.dumps({"trace": str(child), "turn": turn, "mode": mode}) + "\n"
    try:
        where = sidecar_dir(parent)
        where.mkdir(parents=True, exist_ok=True)
        with open(where / CHILDREN_FILE, "a", encoding="utf-8") as fh:
            fh.write(line)
    except OSError:
        pass


def _recorded_children(trace_path: Path) -> list[Path]:
    try:
        text = (sidecar_dir(trace_path) / CHILDREN_FILE).read_text(encoding="utf-8")
    except OSError:
        return []
    out = []
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a line cut short by a crash
        if isinstance(entry, dict) and isinstance(entry.get("trace"), str):
            out.append(Path(entry["trace"]))
    return out


class _ForkFinder:
    """Opens traces at most once per ``read_lineage`` call and lists the episode directories of a folder."""

    def __init__(self) -> None:
        self._traces: dict[Path, Trace | None] = {}
        self._folders: dict[Path, list[Path]] = {}

    def trace(self, path: Path) -> Trace | None:
        key = _resolved(path)
        if key not in self._traces:
            try:
                self._traces[key] = open_trace(key)
            except (TraceError, OSError):
                self._traces[key] = None
        return self._traces[key]

    def episodes_in(self, folder: Path) -> list[Path]:
        key = _resolved(folder)
        if key not in self._folders:
            try:
                entries = sorted(os.scandir(key), key=lambda e: e.name)
            except OSError:
                entries = []
            self._folders[key] = [Path(e.path) / EPISODE_TRACE for e in entries
                                  if e.is_dir(follow_symlinks=False) and (Path(e.path) / EPISODE_TRACE).is_file()]
        return self._folders[key]

    def children(self, trace_path: Path) -> list[tuple[Path, int | None, str]]:
        """(trace, turn, mode) of each fork of ``trace_path``, by the turn it was forked at, then its name."""
        me = _resolved(trace_path)
        episode_dir = me.parent
        candidates = [*_recorded_children(me), *self.episodes_in(episode_dir / FORKS_DIR),
                      *self.episodes_in(episode_dir / BISECT_DIR)]
        if me.name == EPISODE_TRACE:
            candidates += self.episodes_in(episode_dir.parent)
        found: dict[Path, tuple[Path, int | None, str]] = {}
        for candidate in candidates:
            key = _resolved(candidate)
            if key == me or key in found:
                continue
            trace = self.trace(key)
            if trace is None:
                continue
            parent, turn, mode = forked_from(trace.header.extra)
            if parent is not None and _resolved(parent) == me:
                found[key] = (key, turn, mode)
        return sorted(found.values(), key=lambda c: (c[1] if c[1] is not None else -1, str(c[0])))


# A line whose type is one of these (a finding, a resume, the end); no other line is parsed, and the search for them
# runs over whole blocks of the file, so a long trace is read at about disk speed.
_WANTED = re.compile(rb'"type"\s*:\s*"(?:finding|resume|episode_end)"')
BLOCK = 8 << 20


def _marks(trace: Trace) -> Iterator[Event]:
    """The events of ``trace`` that may be findings, resumes or its end, in order (the rest is not parsed)."""
    if trace.in_memory:
        yield from trace.iter_events()
        return
    with open(trace.path, "rb") as fh:
        fh.readline()  # the header
        carry = b""
        while True:
            block = fh.read(BLOCK)
            data = carry + block
            cut = data.rfind(b"\n") + 1 if block else len(data)  # whole lines only, until the last block
            lines, carry = data[:cut], data[cut:]
            done = -1
            for found in _WANTED.finditer(lines):
                start = lines.rfind(b"\n", 0, found.start()) + 1
                if start <= done:
                    continue  # the same line again (its type named twice)
                end = lines.find(b"\n", found.end())
                end = len(lines) if end == -1 else end
                done = end
                try:
                    yield parse_event(lines[start:end].rstrip(b"\r"))
                except LineError:
                    continue  # a line cut short by a crash (or not ours): the tree shows what can be read
            if not block:
                return


def branch_facts(trace: Trace, turn: int | None = None, mode: str = "") -> Branch:
    """A branch for an open trace, without its forks: how it ended (from its tail), its first recorded finding and
    its resumes (one pass over its lines, parsing only those that may be one of these)."""
    branch = Branch(path=Path(trace.path), turn=turn, mode=mode)
    last = trace.last_event
    if isinstance(last, EpisodeEnd):
        branch.ended, branch.score, branch.passed = True, last.score, last.passed
    for ev in _marks(trace):
        if isinstance(ev, EpisodeResume):
            branch.resumed_at.append(ev.from_turn)
        elif isinstance(ev, Finding) and not branch.first_finding:
            branch.first_finding = f"turn {ev.turn} · {ev.detector}: {ev.message}"
        elif isinstance(ev, EpisodeEnd):
            branch.ended, branch.score, branch.passed = True, ev.score, ev.passed
    return branch


def read_lineage(path: str | os.PathLike[str]) -> Lineage:
    """The lineage of the episode at ``path`` (its directory or trace): parent, and every fork found, recursively.

    Raises ``TraceError`` when ``path`` itself is not a readable trace; forks that cannot be read are left out.
    """
    finder = _ForkFinder()
    trace = open_trace(path)
    parent, parent_turn, mode = forked_from(trace.header.extra)
    root = branch_facts(trace, parent_turn, mode)
    seen = {_resolved(Path(trace.path))}

    def grow(branch: Branch, depth: int) -> None:
        if depth >= MAX_DEPTH:
            return
        for child_path, child_turn, child_mode in finder.children(branch.path):
            if child_path in seen:
                continue
            seen.add(child_path)
            child_trace = finder.trace(child_path)
            if child_trace is None:
                continue
            child = branch_facts(child_trace, child_turn, child_mode)
            branch.children.append(child)
            grow(child, depth + 1)

    grow(root, 0)
    return Lineage(root=root, parent=parent, parent_turn=parent_turn,
                   parent_exists=parent is not None and parent.is_file())


__all__ = ["BISECT_DIR", "Branch", "CHILDREN_FILE", "FORKS_DIR", "Lineage", "branch_facts", "forked_from",
           "read_lineage", "record_child"]
