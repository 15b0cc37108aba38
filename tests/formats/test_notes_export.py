"""The operator's notes go along into the exports: the headless log and ATIF (which still imports)."""

from __future__ import annotations

import io
import json
from pathlib import Path

from stripebench_tui.core.annotations import Annotations
from stripebench_tui.formats.atif import atif_from_trace
from stripebench_tui.formats.open import open_episode
from stripebench_tui.formats.text import write_headless
from tests.tui.episode import write_trace


def test_notes_are_in_the_headless_log_and_in_atif(tmp_path: Path) -> None:
    trace = write_trace(tmp_path / "trace.jsonl")
    Annotations(trace.path).add(2, "the 400 \x1b[31mstarts\x1b[0m here")
    Annotations(trace.path).add(4)
    out = io.StringIO()
    write_headless(trace, out)
    log = out.getvalue()
    assert "── turn 2 · " in log and "✎ note: the 400 starts here\n" in log  # sanitised like all terminal text
    assert log.index("✎ note: the 400") < log.index("── turn 3")
    assert "✎ note: (bookmark)" in log
    doc = atif_from_trace(trace)
    ours = doc["extra"]["stripebench"]
    assert [(n["turn"], n["text"]) for n in ours["notes"]] == [(2, "the 400 \x1b[31mstarts\x1b[0m here"), (4, "")]
    noted = [s["extra"]["stripebench"]["turn"] for s in doc["steps"] if "note" in s["extra"]["stripebench"]]
    assert noted and set(noted) <= {2, 4}
    exported = tmp_path / "x.atif.json"
    exported.write_text(json.dumps(doc), encoding="utf-8")
    assert len(list(open_episode(exported).iter_events())) == len(list(trace.iter_events()))


def test_without_notes_the_exports_are_as_before(tmp_path: Path) -> None:
    trace = write_trace(tmp_path / "trace.jsonl")
    assert "notes" not in atif_from_trace(trace)["extra"]["stripebench"]
    out = io.StringIO()
    write_headless(trace, out)
    assert "✎" not in out.getvalue()
