"""The notes store: beside the trace, atomic, sorted by turn, and never touching the trace."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from stripebench_tui.core.annotations import NOTES_SCHEMA, Annotations, load_notes, notes_path
from stripebench_tui.errors import BadFileError
from tests.tui.episode import write_trace


@pytest.fixture
def trace_path(tmp_path: Path) -> Path:
    (tmp_path / "ep").mkdir()
    return write_trace(tmp_path / "ep" / "trace.jsonl").path


def test_notes_are_kept_beside_the_trace_and_survive_reopening(trace_path: Path) -> None:
    before = hashlib.sha256(trace_path.read_bytes()).hexdigest()
    stamps = iter(["2026-12-02T00:00:01Z", "2026-12-02T00:00:02Z", "2026-12-02T00:00:03Z"])
    notes = Annotations(trace_path, clock=lambda: next(stamps))
    notes.add(5, "  paid twice  ")
    notes.add(2)  # a bookmark without text
    notes.edit(5, "paid twice: the idempotency key changed")
    assert notes_path(trace_path) == trace_path.with_name("trace.jsonl.notes.json")
    assert notes_path(trace_path.parent) == notes_path(trace_path)  # an episode directory names its trace
    again = Annotations(trace_path)
    assert [(n.turn, n.text) for n in again.notes] == [(2, ""), (5, "paid twice: the idempotency key changed")]
    assert again.get(5).created == "2026-12-02T00:00:01Z" and again.get(5).updated == "2026-12-02T00:00:03Z"
    doc = json.loads(notes_path(trace_path).read_text(encoding="utf-8"))
    assert doc["schema"] == NOTES_SCHEMA and doc["trace"] == "trace.jsonl"
    assert again.remove(2) and not again.remove(2)
    assert [n.turn for n in load_notes(trace_path)] == [5]
    assert hashlib.sha256(trace_path.read_bytes()).hexdigest() == before
    leftovers = [p.name for p in trace_path.parent.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []  # the temporary file of the atomic write is gone
    with pytest.raises(KeyError):
        again.edit(9, "no such note")
    with pytest.raises(ValueError):
        again.add(-1, "before the episode")


def test_a_failed_write_leaves_the_old_notes(trace_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    notes = Annotations(trace_path)
    notes.add(1, "first")
    old = notes_path(trace_path).read_bytes()

    def broken(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("stripebench_tui.core.annotations.os.replace", broken)
    with pytest.raises(BadFileError, match="cannot write"):
        notes.add(2, "second")
    assert notes_path(trace_path).read_bytes() == old
    assert not [p for p in trace_path.parent.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("content, reason", [
    ("{oops", "invalid JSON"),
    ('{"schema": "something/1", "notes": []}', "expected schema"),
    ('{"schema": "stripebench.notes/1", "notes": [{"text": "no turn"}]}', "no valid 'turn'"),
])
def test_a_malformed_notes_file_is_one_line(trace_path: Path, content: str, reason: str) -> None:
    notes_path(trace_path).write_text(content, encoding="utf-8")
    with pytest.raises(BadFileError, match=reason) as err:
        Annotations(trace_path)
    assert "\n" not in str(err.value)
