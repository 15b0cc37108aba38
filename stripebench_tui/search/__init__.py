"""``stripebench search``: find findings, Stripe requests, tool calls, verdict changes and output text across episodes.

``search(root, query)`` looks in every episode under ``root`` (a batch directory, or any folder of episodes: each
``trace.jsonl`` found), through each episode's index (``search.index``, built on first use and rebuilt when the trace
changes). The query language is in ``search.query``.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from stripebench_tui.errors import UserError
from stripebench_tui.search.index import INDEX_NAME, EpisodeIndex, SearchHit, scan
from stripebench_tui.search.query import Clause, parse


@dataclass
class EpisodeHits:
    episode: Path  # the episode directory
    label: str  # its path relative to the searched folder
    hits: list[SearchHit]


@dataclass
class Found:
    episodes: list[EpisodeHits] = field(default_factory=list)  # only those with hits
    searched: int = 0
    indexed: int = 0  # indexes built or rebuilt by this search
    skipped: list[str] = field(default_factory=list)  # "EPISODE: why"


def episode_traces(root: Path) -> list[Path]:
    """Every ``trace.jsonl`` at or under ``root``; UserError when ``root`` is not a folder."""
    if not root.is_dir():
        raise UserError(f"{root}: not a folder of episodes (a batch directory, or a folder holding episode folders)")
    here = root / "trace.jsonl"
    if here.is_file():
        return [here]
    return sorted(p for p in root.rglob("trace.jsonl") if p.is_file() and not p.is_symlink())


def search(root: Path, query: str | list[Clause], *, use_index: bool = True) -> Found:
    """The hits of ``query`` in every episode under ``root``."""
    clauses = parse(query) if isinstance(query, str) else query
    found = Found()
    for trace in episode_traces(root):
        label = str(trace.parent.relative_to(root)) if trace.parent != root else root.name
        found.searched += 1
        try:
            if use_index:
                index = EpisodeIndex(trace)
                if not index.current():
                    try:
                        index.build()
                        found.indexed += 1
                    except OSError:  # a folder we may not write into: search the trace itself
                        hits = scan(trace, clauses)
                    else:
                        hits = index.search(clauses)
                else:
                    hits = index.search(clauses)
            else:
                hits = scan(trace, clauses)
        except sqlite3.Error as exc:  # an index damaged after it was stamped current, a full disk while building
            found.skipped.append(f"{label}: its search index cannot be read ({exc}); --no-index reads the trace")
            continue
        except (UserError, OSError, ValueError) as exc:
            found.skipped.append(f"{label}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
            continue
        if hits:
            found.episodes.append(EpisodeHits(trace.parent, label, hits))
    return found


__all__ = ["EpisodeHits", "Found", "INDEX_NAME", "episode_traces", "search"]
