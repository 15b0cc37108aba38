"""Resume's trace surgery (runtime.resume): the cut at a checkpoint, the appended trace, and what cannot be resumed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stripebench_tui.core import turns_sidecar
from stripebench_tui.core.events import EpisodeEnd, EpisodeResume, Header, ModelMessage, ToolCall
from stripebench_tui.core.trace import open_trace
from stripebench_tui.core.trace_writer import TraceWriter
from stripebench_tui.errors import UserError
from stripebench_tui.runtime.checkpoints import CheckpointInfo, checkpoints_dir
from stripebench_tui.runtime.resume import cut_trace, resumable_checkpoint


def _trace(path: Path, turns: int, end: bool = False) -> list[tuple[int, int]]:
    """A trace of ``turns`` turns (two events each); (next seq, bytes) at the end of each turn."""
    marks = []
    with TraceWriter(path, Header(env="tiny-shop", agent="oracle")) as writer:
        seq = 0
        for turn in range(1, turns + 1):
            for event in (ModelMessage(text=f"turn {turn}"), ToolCall(call_id=f"c{turn}", tool="shell")):
                event.seq, event.turn = seq, turn
                writer.write(event)
                seq += 1
            writer.end_turn()
            marks.append((seq, path.stat().st_size))
        if end:
            writer.write(EpisodeEnd(seq=seq, turn=turns, reason="agent_done"))
    return marks


def _checkpoint(trace: Path, turn: int, next_seq: int, size: int) -> CheckpointInfo:
    where = checkpoints_dir(trace) / str(turn)
    where.mkdir(parents=True)
    info = CheckpointInfo(turn=turn, path=where, trace_bytes=size, next_seq=next_seq)
    (where / "info.json").write_text(json.dumps(info.to_dict()))
    return info


def test_cut_moves_the_cut_short_turn_aside_and_the_writer_goes_on(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    marks = _trace(trace, 3)
    info = _checkpoint(trace, 2, *marks[1])
    dropped, count = cut_trace(trace, info)
    assert count == 2 and dropped is not None
    assert [json.loads(line)["turn"] for line in dropped.read_text().splitlines()] == [3, 3]
    assert trace.stat().st_size == marks[1][1]
    index = turns_sidecar.parse((trace.parent / "trace.jsonl.d" / "turns.idx").read_bytes())
    assert index is not None and list(index.turns) == [1, 2]
    with TraceWriter(trace, Header(), resume_at=(info.next_seq, info.turn)) as writer:
        writer.write(EpisodeResume(seq=info.next_seq, turn=2, from_turn=2, dropped=dropped.name, dropped_events=count))
        writer.write(ModelMessage(seq=info.next_seq + 1, turn=3, text="turn 3 again"))
    events = list(open_trace(trace).iter_events())
    assert [e.seq for e in events] == list(range(len(events)))
    assert [e.turn for e in events] == [1, 1, 2, 2, 2, 3]
    assert open_trace(trace).header.env == "tiny-shop"  # the header is the episode's, kept
    index = turns_sidecar.parse((trace.parent / "trace.jsonl.d" / "turns.idx").read_bytes())
    assert list(index.turns) == [1, 2, 3]


def test_what_cannot_be_resumed_says_why(tmp_path: Path) -> None:
    ended = tmp_path / "ended" / "trace.jsonl"
    ended.parent.mkdir()
    _trace(ended, 2, end=True)
    with pytest.raises(UserError, match="the episode ended"):
        resumable_checkpoint(open_trace(ended))
    bare = tmp_path / "bare" / "trace.jsonl"
    bare.parent.mkdir()
    _trace(bare, 2)
    with pytest.raises(UserError, match="kept no checkpoint") as caught:
        resumable_checkpoint(open_trace(bare))
    assert caught.value.exit_code == 4
    marks = _trace(tmp_path / "ok.jsonl", 2)
    _checkpoint(tmp_path / "ok.jsonl", 1, *marks[0])
    _checkpoint(tmp_path / "ok.jsonl", 2, *marks[1])
    assert resumable_checkpoint(open_trace(tmp_path / "ok.jsonl")).turn == 2
