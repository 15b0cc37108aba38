"""The turn index: fast state_at agrees with replaying, the sidecar index is checked, and it falls back."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from stripebench_tui.core import turns_sidecar
from stripebench_tui.core.events import ModelMessage, ToolCall, ToolResult
from stripebench_tui.core.state import RUNNING, reduce
from stripebench_tui.core.trace import Trace, TraceWriter, open_trace, sidecar_dir
from tests.core.episodes import header, random_episode, small_episode, summary


def write(path: Path, events) -> list:
    with TraceWriter(path, header()) as w:
        return [w.write(ev) for ev in events]


@pytest.mark.parametrize("seed", range(12))
def test_state_at_every_turn_equals_replaying_up_to_that_turn(tmp_path: Path, seed: int) -> None:
    path = tmp_path / "t.jsonl"
    written = write(path, random_episode(seed))
    trace = open_trace(path)
    index = trace.index()
    assert index.exact and index.event_count == len(written)
    for turn in index.turns:
        upto = [e for e in written if e.turn <= turn]
        expected = reduce([trace.header, *upto])
        assert summary(trace.state_at(turn)) == summary(expected), f"turn {turn}"
        assert summary(trace.state_at(turn, keep_output=True)) == summary(expected)
    assert summary(trace.state_at(None)) == summary(reduce([trace.header, *written]))


def test_a_call_answered_in_a_later_turn_is_running_at_the_earlier_turn(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write(path, [
        ToolCall(t=1, turn=1, call_id="slow", tool="shell"),
        ModelMessage(t=2, turn=2, text="waiting"),
        ToolResult(t=3, turn=2, call_id="slow", tool="shell", output="done"),
    ])
    trace = open_trace(path)
    early = trace.state_at(1)
    assert early.turns[0].calls[0].status == RUNNING and list(early.pending_calls) == ["slow"]
    late = trace.state_at(2)
    assert late.turns[0].calls[0].status == "ok" and late.pending_calls == {}
    # the lookup handed out copies: the later state is not disturbed by the earlier one
    assert trace.state_at(2).turns[0].calls[0].result is not None


def test_states_are_independent_containers(tmp_path: Path) -> None:
    # Object and turn records are shared between states (read-only, for fast seeks); the containers are not.
    path = tmp_path / "t.jsonl"
    write(path, small_episode())
    trace = open_trace(path)
    s = trace.state_at(2)
    s.objects.pop("cs_test_1")
    s.turns.clear()
    s.verdicts["paid"].history.clear()
    again = trace.state_at(2)
    assert again.objects["cs_test_1"].data == {"status": "open"} and len(again.turns) == 3
    assert len(again.verdicts["paid"].history) == 2


def test_events_for_turn_and_offsets(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    written = write(path, small_episode())
    trace = open_trace(path)
    for turn in (0, 1, 2, 3):
        assert [e.seq for e in trace.events_for_turn(turn)] == [e.seq for e in written if e.turn == turn]
    assert trace.events_for_turn(42) == []
    index = trace.index()
    assert index.turns == [0, 1, 2, 3]
    data = path.read_bytes()
    for turn in index.turns:
        off = index.offset_of_turn(turn)
        assert data[off - 1 : off] == b"\n" and f'"turn":{turn},'.encode() in data[off : off + 60]
    with pytest.raises(KeyError):
        index.offset_of_turn(42)


def _records(path: Path) -> list[tuple[int, int]]:
    """The (turn, offset) records of a trace's sidecar index, as the writer wrote them (format 2)."""
    data = (sidecar_dir(path) / "turns.idx").read_bytes()
    magic, _, body = data.partition(b"\n")
    assert magic == turns_sidecar.MAGIC and len(body) % turns_sidecar.RECORD.size == 0
    return list(turns_sidecar.RECORD.iter_unpack(body))


def _write_index(path: Path, records: list[tuple[int, int]], magic: bytes = turns_sidecar.MAGIC) -> None:
    body = b"".join(turns_sidecar.RECORD.pack(*r) for r in records)
    (sidecar_dir(path) / "turns.idx").write_bytes(magic + b"\n" + body)


def _break_sidecar(path: Path, how: str) -> None:
    idx = sidecar_dir(path) / "turns.idx"
    records = _records(path)
    if how == "missing":
        idx.unlink()
    elif how == "garbage":
        idx.write_bytes(turns_sidecar.MAGIC + b"\nnot numbers\n")
    elif how == "old format garbage":
        idx.write_text("stripebench.trace-index/1\nnot numbers\n")
    elif how == "wrong offsets":
        _write_index(path, [(turn, offset + 7) for turn, offset in records])
    elif how == "stale":
        _write_index(path, records[:-1])  # the writer died before recording the last turn
    elif how == "cut record":
        idx.write_bytes(idx.read_bytes()[:-5])  # ... or in the middle of writing it
    elif how == "out of order":
        _write_index(path, [records[1], records[0], *records[2:]])
    elif how == "other magic":
        _write_index(path, records, magic=b"something else")


@pytest.mark.parametrize("how", ["missing", "garbage", "old format garbage", "wrong offsets", "stale", "cut record",
                                 "out of order", "other magic"])
def test_events_for_turn_falls_back_when_the_sidecar_index_is_unusable(tmp_path: Path, how: str) -> None:
    path = tmp_path / "t.jsonl"
    written = write(path, small_episode())
    _break_sidecar(path, how)
    trace = open_trace(path)
    for turn in (3, 1, 2):
        assert [e.seq for e in trace.events_for_turn(turn)] == [e.seq for e in written if e.turn == turn], how


def test_events_for_turn_uses_the_sidecar_without_a_full_scan(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write(path, small_episode())
    assert [turn for turn, _ in _records(path)] == [0, 1, 2, 3]
    trace = open_trace(path)
    assert [e.turn for e in trace.events_for_turn(3)] == [3] * 6
    assert trace.quick_turns() == [0, 1, 2, 3]
    assert trace._index is None  # answered from turns.idx alone
    (sidecar_dir(path) / "turns.idx").unlink()
    assert open_trace(path).quick_turns() is None


def test_an_index_in_the_earlier_text_format_is_still_used(tmp_path: Path) -> None:
    """Traces written before format 2 carry a ``turn offset`` text line per turn."""
    path = tmp_path / "t.jsonl"
    written = write(path, small_episode())
    lines = "".join(f"{turn} {offset}\n" for turn, offset in _records(path))
    (sidecar_dir(path) / "turns.idx").write_text("stripebench.trace-index/1\n" + lines, encoding="ascii")
    trace = open_trace(path)
    assert trace.quick_turns() == [0, 1, 2, 3]
    assert [e.seq for e in trace.events_for_turn(2)] == [e.seq for e in written if e.turn == 2]
    assert trace._index is None


def test_non_contiguous_turns_take_the_replay_path(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    events = [ModelMessage(t=i, turn=turn, text=f"m{i}") for i, turn in enumerate([1, 4, 1, 3, 2])]
    written = write(path, events)
    trace = open_trace(path)
    index = trace.index()
    assert not index.exact and index.turns == [1, 2, 3, 4]
    assert [e.seq for e in trace.events_for_turn(1)] == [0, 2]
    assert [e.seq for e in trace.events_for_turn(2)] == [4]
    s = trace.state_at(1)  # after turn 1's last event (seq 2)
    assert summary(s) == summary(reduce([trace.header, *written[:3]]))
    assert summary(trace.state_at(None)) == summary(reduce([trace.header, *written]))


def test_index_is_built_once_across_threads(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write(path, random_episode(3, turns=200))
    trace = open_trace(path)
    seen = []
    threads = [threading.Thread(target=lambda: seen.append(trace.index())) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len({id(i) for i in seen}) == 1


def test_open_reads_only_the_header_and_tail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "t.jsonl"
    with TraceWriter(path, header()) as w:
        for i in range(3000):
            w.write(ToolResult(t=i, turn=i // 3, call_id=str(i), tool="shell", output="x" * 300))
    read_sizes: list[int] = []
    import builtins

    real_open = builtins.open

    class Counting:
        def __init__(self, f) -> None:
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *a):
            self.f.close()

        def read(self, n=-1):
            data = self.f.read(n)
            read_sizes.append(len(data))
            return data

        def readline(self, n=-1):
            data = self.f.readline(n)
            read_sizes.append(len(data))
            return data

        def __getattr__(self, name):
            return getattr(self.f, name)

    monkeypatch.setattr(builtins, "open", lambda *a, **k: Counting(real_open(*a, **k)))
    trace = open_trace(path)
    monkeypatch.undo()
    assert path.stat().st_size > 1_000_000
    assert sum(read_sizes) < 100_000
    assert isinstance(trace, Trace) and trace.last_event is not None and trace.last_event.seq == 2999
