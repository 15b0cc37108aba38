"""An episode's lineage: its parent and the tree of its forks, wherever they were put, forks of forks included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stripebench_tui.core.events import EpisodeResume
from stripebench_tui.core.trace import TraceError
from stripebench_tui.core.trace_writer import sidecar_dir
from stripebench_tui.formats.bisect_record import BisectRecord, ProbeRecord, read_bisect, write_bisect
from stripebench_tui.formats.lineage import CHILDREN_FILE, forked_from, read_lineage, record_child
from tests.formats.lineage_family import write_family, write_trace


def _tree(branch) -> list:
    return [(c.name, c.turn, c.outcome, _tree(c)) for c in branch.children]


def test_the_tree_holds_every_fork_of_the_original_and_the_fork_of_a_fork(tmp_path: Path) -> None:
    family = write_family(tmp_path)
    lineage = read_lineage(family.original.parent)
    assert lineage.parent is None and lineage.root.turn is None
    assert lineage.root.outcome == "failed 0.50"
    assert lineage.root.first_finding == "turn 2 · 400-as-success: a 400 called a success"
    # by the turn they were forked at; the stranger (another trace's fork) and the plain run are not in it
    assert _tree(lineage.root) == [
        ("late", 1, "did not end", []),
        ("original-fork-2", 2, "passed 1.00", [("again", 3, "passed 1.00", [])]),
        ("at-3", 3, "failed 0.25", []),
    ]
    assert lineage.forks == 4
    under = lineage.root.children[2]
    assert under.mode == "" and under.first_finding == "turn 4 · 400-as-success: the key was logged"
    assert lineage.root.children[1].mode == "restore"


def test_a_fork_knows_its_parent_and_its_own_forks(tmp_path: Path) -> None:
    family = write_family(tmp_path)
    lineage = read_lineage(family.beside)
    assert lineage.parent == family.original.resolve() and lineage.parent_turn == 2 and lineage.parent_exists
    assert _tree(lineage.root) == [("again", 3, "passed 1.00", [])]
    deepest = read_lineage(family.grandchild)
    assert deepest.parent == family.beside.resolve() and deepest.parent_turn == 3 and deepest.forks == 0


def test_a_parent_gone_is_said_and_a_rerun_has_no_turn(tmp_path: Path) -> None:
    gone = tmp_path / "gone" / "trace.jsonl"
    from tests.formats.lineage_family import _forked

    orphan = write_trace(tmp_path / "orphan" / "trace.jsonl", None, _forked(gone, "all", "")).path
    lineage = read_lineage(orphan)
    assert lineage.parent == gone.resolve() and not lineage.parent_exists and lineage.parent_turn is None
    assert lineage.root.mode == "rerun"
    assert forked_from({"forked_from": {"trace": "x", "turn": True}})[1] is None  # a bool is not a turn
    assert forked_from({"forked_from": "nonsense"}) == (None, None, "")


def test_forks_that_name_each_other_do_not_loop(tmp_path: Path) -> None:
    a, b = tmp_path / "a" / "trace.jsonl", tmp_path / "b" / "trace.jsonl"
    from tests.formats.lineage_family import _forked

    write_trace(a, None, _forked(b, 1))
    write_trace(b, None, _forked(a, 1))
    lineage = read_lineage(a)
    assert [c.name for c in lineage.root.children] == ["b"] and lineage.root.children[0].children == []


def test_a_resume_is_recorded_in_the_trace_not_as_a_fork(tmp_path: Path) -> None:
    from tests.tui.episode import checkout_events

    events = checkout_events()
    events.insert(8, EpisodeResume(t=5.0, turn=2, from_turn=2))
    trace = write_trace(tmp_path / "ep" / "trace.jsonl", events).path
    record_child(trace, trace, 2, "restore")  # what a resume's restore would record: nothing
    assert not (sidecar_dir(trace) / CHILDREN_FILE).exists()
    lineage = read_lineage(trace)
    assert lineage.root.resumed_at == [2] and lineage.forks == 0


def test_unreadable_lines_and_forks_are_left_out(tmp_path: Path) -> None:
    family = write_family(tmp_path)
    registry = sidecar_dir(family.original) / CHILDREN_FILE
    registry.write_text(registry.read_text() + '{"trace": "/nowhere/trace.jsonl"}\n{"cut short', encoding="utf-8")
    (family.original.parent.parent / "broken").mkdir()
    (family.original.parent.parent / "broken" / "trace.jsonl").write_text("not json\n", encoding="utf-8")
    assert read_lineage(family.original).forks == 4
    with pytest.raises(TraceError):
        read_lineage(tmp_path / "episodes" / "broken")


def test_a_bisect_result_is_kept_beside_the_trace(tmp_path: Path) -> None:
    trace = write_trace(tmp_path / "ep" / "trace.jsonl").path
    assert read_bisect(trace) is None
    written = write_bisect(trace, BisectRecord("oracle", 3, [ProbeRecord(1, True, [1.0], ["f1"]),
                                                             ProbeRecord(4, False, [None, 0.5], ["f4"])]))
    assert written.parent == sidecar_dir(trace)
    record = read_bisect(trace)
    assert record is not None and record.last_passing == 3 and record.agent == "oracle"
    assert [(p.turn, p.passed, p.scores) for p in record.probes] == [(1, True, [1.0]), (4, False, [None, 0.5])]
    written.write_text(json.dumps({"agent": 1, "last_passing": "3", "probes": [{"turn": "x"}, 7]}), encoding="utf-8")
    odd = read_bisect(trace)
    assert odd is not None and odd.last_passing is None and odd.probes == [] and odd.agent == ""
    written.write_text("[", encoding="utf-8")
    assert read_bisect(trace) is None


@pytest.mark.parametrize("block", [64, 1 << 20])
def test_the_quick_scan_finds_what_the_reader_finds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int) -> None:
    from stripebench_tui.core.events import Finding, ToolResult
    from stripebench_tui.core.trace import open_trace
    from stripebench_tui.formats import lineage
    from tests.tui.episode import checkout_events

    monkeypatch.setattr(lineage, "BLOCK", block)  # small blocks: lines cut across reads are put back together
    events = checkout_events()
    events.insert(3, ToolResult(t=1.1, turn=1, call_id="x", tool="shell",
                                output='{"type":"finding","detector":"fake"} and "type": "resume"'))
    events.insert(8, EpisodeResume(t=4.5, turn=2, from_turn=1))
    events.insert(12, Finding(t=8.5, turn=3, detector="lost-focus", message="first real one"))
    events.insert(14, Finding(t=9.0, turn=3, detector="secrets", message="second"))
    path = write_trace(tmp_path / "ep" / "trace.jsonl", events).path
    with open(path, "ab") as fh:
        fh.write(b'{"seq": 99, "type": "finding", "detector": "cut sh')  # a crash mid-line
    branch = lineage.branch_facts(open_trace(path))
    assert branch.first_finding == "turn 3 · lost-focus: first real one"
    assert branch.resumed_at == [1] and branch.ended and branch.score == 1.0
