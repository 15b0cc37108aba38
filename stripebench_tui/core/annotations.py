"""The operator's notes on turns, kept in a file beside the trace (``trace.jsonl.notes.json``).

A note bookmarks one turn (its text may be empty). The trace itself is never
opened for writing: a trace is the record of what happened, and a note is an
opinion about it added later, live or in a replay. The notes file is rewritten
whole on every change through a temporary file and ``os.replace``, so a crash
leaves either the old notes or the new ones, never half of either.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from stripebench_tui.core import json_depth
from stripebench_tui.core.episode_files import Refused, read_episode_file
from stripebench_tui.core.whole_file import write_whole
from stripebench_tui.errors import BadFileError

NOTES_SCHEMA = "stripebench.notes/1"
NOTES_SUFFIX = ".notes.json"
MAX_NOTE_CHARS = 4000  # a note is a remark, not a document; longer text is cut


def notes_path(trace_path: str | os.PathLike[str]) -> Path:
    """Where the notes of the trace at ``trace_path`` live (an episode directory stands for its trace.jsonl)."""
    p = Path(trace_path)
    if p.is_dir():
        p = p / "trace.jsonl"
    return p.with_name(p.name + NOTES_SUFFIX)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class Note:
    """One bookmarked turn and what the operator wrote about it."""

    turn: int
    text: str = ""
    created: str = ""  # ISO 8601, UTC
    updated: str = ""


class Annotations:
    """The notes of one trace: ``add``/``edit``/``remove`` write the file at once; ``notes`` is sorted by turn."""

    def __init__(self, trace_path: str | os.PathLike[str], *, clock: Callable[[], str] = _now) -> None:
        self.path = notes_path(trace_path)
        self.trace_name = self.path.name[: -len(NOTES_SUFFIX)]
        self._clock = clock
        self._by_turn: dict[int, Note] = {}
        self.reload()

    # ----- reading ------------------------------------------------------------------------
    def reload(self) -> None:
        """Read the file again (missing: no notes); a malformed or refused file is a one-line ``BadFileError``."""
        try:
            raw = read_episode_file(self.path.parent, self.path.name)
        except FileNotFoundError:
            self._by_turn = {}
            return
        except Refused as exc:
            raise BadFileError(f"{self.path}: refused, {exc.reason}") from None
        except OSError as exc:
            raise BadFileError(f"{self.path}: cannot read ({exc.strerror})") from None
        self._by_turn = {n.turn: n for n in _parse(raw, self.path)}

    @property
    def notes(self) -> list[Note]:
        return [self._by_turn[k] for k in sorted(self._by_turn)]

    @property
    def turns(self) -> set[int]:
        return set(self._by_turn)

    def get(self, turn: int) -> Note | None:
        return self._by_turn.get(turn)

    def __len__(self) -> int:
        return len(self._by_turn)

    # ----- changing -----------------------------------------------------------------------
    def add(self, turn: int, text: str = "") -> Note:
        """Bookmark ``turn`` with ``text`` (replacing the text of a note it already has)."""
        if isinstance(turn, bool) or not isinstance(turn, int) or turn < 0:
            raise ValueError(f"a note needs a turn number ≥ 0, not {turn!r}")
        old = self._by_turn.get(turn)
        now = self._clock()
        note = Note(turn, _clean(text), old.created if old else now, now)
        self._by_turn[turn] = note
        self._save()
        return note

    def edit(self, turn: int, text: str) -> Note:
        """Change the text of the note on ``turn``; KeyError when that turn has none."""
        if turn not in self._by_turn:
            raise KeyError(turn)
        return self.add(turn, text)

    def remove(self, turn: int) -> bool:
        """Drop the note on ``turn``; False when there was none (the file is then left as it is)."""
        if self._by_turn.pop(turn, None) is None:
            return False
        self._save()
        return True

    def _save(self) -> None:
        doc = {"schema": NOTES_SCHEMA, "trace": self.trace_name, "notes": [asdict(n) for n in self.notes]}
        write_whole(self.path, (json.dumps(doc, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))


def _clean(text: str) -> str:
    text = str(text).strip()
    return text[:MAX_NOTE_CHARS]


def _parse(raw: bytes, path: Path) -> list[Note]:
    try:
        doc: Any = json_depth.loads(raw)
    except (UnicodeDecodeError, ValueError) as exc:
        raise BadFileError(f"{path}: not a notes file (invalid JSON: {exc})") from None
    if not isinstance(doc, dict) or doc.get("schema") != NOTES_SCHEMA or not isinstance(doc.get("notes"), list):
        raise BadFileError(f"{path}: not a notes file (expected schema {NOTES_SCHEMA!r} with a 'notes' list)")
    out: list[Note] = []
    for i, item in enumerate(doc["notes"]):
        turn = item.get("turn") if isinstance(item, dict) else None
        if isinstance(turn, bool) or not isinstance(turn, int) or turn < 0:
            raise BadFileError(f"{path}: note {i + 1} has no valid 'turn'")
        out.append(Note(turn, _clean(item.get("text", "")), str(item.get("created", "")), str(item.get("updated", ""))))
    return out


def load_notes(trace_path: str | os.PathLike[str]) -> list[Note]:
    """The notes of a trace, sorted by turn (none when it has no notes file)."""
    return Annotations(trace_path).notes


__all__ = ["Annotations", "NOTES_SCHEMA", "NOTES_SUFFIX", "Note", "load_notes", "notes_path"]
