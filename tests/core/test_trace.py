"""Trace writer and reader: round trip, truncation, corruption, schema versions, sidecars, redaction."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from stripebench_tui.core.events import SCHEMA, Header, ModelMessage, ToolCall, ToolResult
from stripebench_tui.core.state import reduce
from stripebench_tui.core.trace import TraceError, TraceWriter, open_trace, sidecar_dir
from stripebench_tui.errors import EXIT_BAD_FILE
from tests.core.episodes import header, small_episode, summary


def write(path: Path, events, **kw) -> list:
    with TraceWriter(path, header(), **kw) as w:
        written = []
        last_turn = None
        for ev in events:
            if last_turn is not None and ev.turn != last_turn:
                w.end_turn()
            last_turn = ev.turn
            written.append(w.write(ev))
    return written


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_round_trip_keeps_every_event_and_assigns_seq(tmp_path: Path) -> None:
    events = small_episode()
    for ev in events:
        ev.seq = 999  # the writer numbers events itself
    path = tmp_path / "t.jsonl"
    written = write(path, events)
    assert [e.seq for e in written] == list(range(len(events)))
    lines = path.read_text().splitlines()
    first = json.loads(lines[0])
    assert first["type"] == "header" and first["schema"] == SCHEMA and first["env"] == "checkout-migration"
    assert len(lines) == len(events) + 1
    trace = open_trace(path)
    assert trace.header.env == "checkout-migration" and not trace.truncated
    back = list(trace.iter_events())
    assert [e.to_dict() for e in back] == [e.to_dict() for e in written]
    assert trace.last_event is not None and trace.last_event.to_dict() == written[-1].to_dict()


def test_write_returns_a_copy_and_leaves_the_callers_event_alone(tmp_path: Path) -> None:
    ev = ModelMessage(seq=7, t=1, turn=1, text="key sk_test_abcdefghijkl")
    with TraceWriter(tmp_path / "t.jsonl", header()) as w:
        out = w.write(ev)
    assert ev.seq == 7 and "abcdefghijkl" in ev.text
    assert out.seq == 0 and "abcdefghijkl" not in out.text


def test_writer_refuses_to_overwrite_an_existing_trace(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("precious\n")
    with pytest.raises(TraceError, match="already exists"):
        TraceWriter(path, header())
    assert path.read_text() == "precious\n"


def test_each_event_is_on_disk_as_soon_as_it_is_written(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    w = TraceWriter(path, header())
    w.write(ModelMessage(t=1, turn=1, text="hello"))
    # another reader sees it before close (flush per event)
    assert open_trace(path).last_event.text == "hello"  # type: ignore[union-attr]
    w.end_turn()
    w.close()
    w.close()  # idempotent


def test_truncated_final_line_is_tolerated(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    written = write(path, small_episode())
    data = path.read_bytes()
    cut = data[: len(data) - 25]  # a crash in the middle of the last line
    path.write_bytes(cut)
    trace = open_trace(path)
    assert trace.truncated
    assert trace.last_event is not None and trace.last_event.seq == written[-2].seq
    events = list(trace.iter_events())
    assert len(events) == len(written) - 1
    assert trace.state_at().ended is None


def test_a_complete_last_line_without_newline_is_an_event(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    written = write(path, small_episode())
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    trace = open_trace(path)
    assert not trace.truncated and trace.last_event.seq == written[-1].seq  # type: ignore[union-attr]
    assert len(list(trace.iter_events())) == len(written)


@pytest.mark.parametrize(
    "damage, line, reason",
    [
        (lambda ls: ls.__setitem__(3, b"{not json"), 4, "not JSON"),
        (lambda ls: ls.__setitem__(3, b"[1, 2]"), 4, "expected a JSON object"),
        (lambda ls: ls.__setitem__(3, b'{"seq": 2, "t": 0, "turn": 1, "type": "telepathy"}'), 4, "unknown event type"),
        (lambda ls: ls.__setitem__(3, b'{"seq": "x", "t": 0, "turn": 1, "type": "model_message"}'), 4, "'seq'"),
        (lambda ls: ls.__setitem__(3, b'{"seq": 2, "t": 0, "turn": 1, "type": "model_message", "tokens_in": "many"}'), 4,
         "tokens_in"),
        (lambda ls: ls.__setitem__(3, b'{"seq": 2, "t": 0, "turn": 1, "type": "tool_call", "arguments": []}'), 4, "arguments"),
        (lambda ls: ls.__setitem__(3, b'{"seq": 2, "t": 0, "turn": 1, "type": "tool_result", "is_error": 1}'), 4, "is_error"),
        (lambda ls: ls.__setitem__(3, b'{"seq": 2, "t": 0, "turn": 1, "type": "model_message", "text": null}'), 4, "text"),
        (lambda ls: ls.__setitem__(3, b""), 4, "not JSON"),
        (lambda ls: ls.__setitem__(3, b"\xff\xfe garbage"), 4, "UTF-8"),
        (lambda ls: ls.insert(5, ls[0]), 6, "second header"),
    ],
)
def test_damage_anywhere_else_names_file_and_line(tmp_path: Path, damage, line: int, reason: str) -> None:
    path = tmp_path / "t.jsonl"
    write(path, small_episode())
    lines = path.read_bytes().split(b"\n")
    damage(lines)
    path.write_bytes(b"\n".join(lines))
    before = digest(path)
    with pytest.raises(TraceError) as err:
        list(open_trace(path).iter_events())
    msg = str(err.value)
    assert msg.startswith(f"{path}:{line}: ") and reason in msg and "\n" not in msg
    with pytest.raises(TraceError, match=f":{line}: "):
        open_trace(path).index()
    assert digest(path) == before


def test_a_damaged_last_complete_line_fails_at_open_with_its_line_number(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    written = write(path, small_episode())
    lines = path.read_bytes().split(b"\n")
    lines[-2] = b'{"seq": 1, "turn": 1, "type": "model_message"}'  # lacks t; the file still ends with a newline
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(TraceError, match=rf"^{path}:{len(written) + 1}: .*'t'"):
        open_trace(path)


@pytest.mark.parametrize(
    "content, reason",
    [
        (b"", "empty file"),
        (b"\n\n", ":1: blank line where the trace header should be"),
        (b'{"seq": 0, "t": 0, "turn": 1, "type": "model_message"}\n', ":1: the first line is a model_message event"),
        (b"hello world\n", ":1: not a stripebench trace"),
        (b'{"type": "header"}\n', ":1: the header has no schema"),
        (b'{"type": "header", "schema": "other.format/1"}\n', "not a stripebench trace (schema 'other.format/1')"),
        (b'{"type": "header", "schema": "stripebench.trace/0"}\n', "older"),
        (b'{"type": "header", "schema": "stripebench.trace/2"}\n', "written by a newer stripebench (schema stripebench.trace/2)"),
        (b'{"type": "header", "schema": "stripebench.trace/1", "env": 5}\n', "'env'"),
    ],
)
def test_bad_headers(tmp_path: Path, content: bytes, reason: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(content)
    with pytest.raises(TraceError) as err:
        open_trace(path)
    assert str(err.value).startswith(str(path)) and reason in str(err.value)
    assert err.value.exit_code == EXIT_BAD_FILE
    assert path.read_bytes() == content


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match="no such file"):
        open_trace(tmp_path / "nope.jsonl")
    with pytest.raises(TraceError, match="is a directory"):
        open_trace(tmp_path)


def test_newer_fields_of_the_same_major_are_ignored(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(
        json.dumps({"type": "header", "schema": SCHEMA, "env": "e", "future": 1}) + "\n"
        + json.dumps({"seq": 0, "t": 0.5, "turn": 1, "type": "model_message", "text": "hi", "sentiment": "calm"}) + "\n"
    )
    trace = open_trace(path)
    (ev,) = list(trace.iter_events())
    assert isinstance(ev, ModelMessage) and ev.text == "hi"


def test_huge_output_goes_to_a_sidecar_and_full_output_returns_it(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    big = "".join(f"line {i} é\n" for i in range(5000))
    with TraceWriter(path, header(), inline_cap=1000) as w:
        w.write(ToolCall(t=0, turn=1, call_id="c", tool="shell"))
        written = w.write(ToolResult(t=1, turn=1, call_id="c", tool="shell", output=big + "token sk_live_abcdefghijkl"))
        small = w.write(ToolResult(t=2, turn=1, call_id="d", tool="shell", output="small"))
    assert isinstance(written, ToolResult) and written.sidecar and written.output_bytes
    assert len(written.output.encode()) <= 1000 and big.startswith(written.output)
    assert (path.parent / written.sidecar).parent.parent == sidecar_dir(path)
    trace = open_trace(path)
    full = trace.full_output(written)
    assert full.startswith(big) and "sk_live_[REDACTED]" in full and "abcdefghijkl" not in full
    assert written.output_bytes == len(full.encode())
    assert trace.full_output(small) == "small"  # type: ignore[arg-type]
    # the state drops output text, but full_output still finds it
    state = trace.state_at()
    dropped = state.turns[0].calls[1].result
    assert dropped is not None and dropped.output == "" and trace.full_output(dropped) == "small"
    assert trace.full_output(state.turns[0].calls[0].result).startswith(big)  # type: ignore[arg-type]


def test_missing_or_escaping_sidecar_is_reported_in_the_text(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with TraceWriter(path, header(), inline_cap=10) as w:
        res = w.write(ToolResult(t=1, turn=1, call_id="c", tool="shell", output="x" * 100))
    shutil.rmtree(sidecar_dir(path) / "outputs")
    trace = open_trace(path)
    assert "missing" in trace.full_output(res)  # type: ignore[arg-type]
    evil = ToolResult(turn=1, output="inline", sidecar="../../etc/passwd")
    assert trace.full_output(evil).startswith("inline\n") and "outside the episode directory" in trace.full_output(evil)


def test_reading_never_modifies_the_trace_or_its_sidecars(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    write(path, small_episode())
    files = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    before = {p: (digest(p), p.stat().st_mtime_ns) for p in files}
    trace = open_trace(path)
    list(trace.iter_events())
    trace.index()
    trace.events_for_turn(2)
    trace.state_at(1)
    trace.state_at(keep_output=True)
    assert sorted(p for p in tmp_path.rglob("*") if p.is_file()) == files
    assert {p: (digest(p), p.stat().st_mtime_ns) for p in files} == before


def test_header_is_redacted_too(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with TraceWriter(path, Header(env="e", extra={"api_key": "sk_test_abcdefghijkl", "note": "whsec_abcdefghijkl"})):
        pass
    text = path.read_text()
    assert "abcdefghijkl" not in text and open_trace(path).header.extra["note"] == "whsec_[REDACTED]"


def test_state_at_matches_plain_reduce_of_the_small_episode(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    written = write(path, small_episode())
    trace = open_trace(path)
    for turn in (0, 1, 2, 3):
        upto = [e for e in written if e.turn <= turn]
        assert summary(trace.state_at(turn)) == summary(reduce([trace.header, *upto]))
    assert trace.state_at(2).objects["cs_test_1"].data == {"status": "open"}
    assert trace.state_at(3).objects["cs_test_1"].data == {"status": "complete"}
    assert trace.state_at(-5).turns == [] and trace.state_at(-5).header is not None
    assert os.path.getsize(path) > 0
