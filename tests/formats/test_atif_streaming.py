"""The ATIF export written step by step (``AtifExport.write``) is the document ``json.dumps`` would give, byte for byte."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from stripebench_tui.core.annotations import Annotations
from stripebench_tui.core.events import ModelMessage, ToolCall, ToolResult
from stripebench_tui.core.trace import Trace, TraceWriter, open_trace
from stripebench_tui.formats.atif import AtifExport
from stripebench_tui.testing import big_trace
from tests.core.episodes import header, random_episode

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = [ROOT / "replays" / "checkout-migration-400", ROOT / "replays" / "checkout-migration-oracle",
           ROOT / "tests" / "fixtures" / "traces" / "checkout-migration-400-before-detectors"]


def streamed(trace: Trace) -> str:
    out = io.StringIO()
    AtifExport(trace).write(out)
    return out.getvalue()


def whole(trace: Trace) -> str:
    return json.dumps(AtifExport(trace).document(), ensure_ascii=False, indent=2) + "\n"


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_samples_stream_to_the_same_bytes(path: Path) -> None:
    trace = open_trace(path)
    assert streamed(trace) == whole(trace)


def test_late_results_rejections_notes_and_an_empty_trace_stream_to_the_same_bytes(tmp_path: Path) -> None:
    for seed in range(6):  # results in later turns hold the steps after theirs back until they come
        path = tmp_path / f"r{seed}.jsonl"
        with TraceWriter(path, header()) as w:
            for ev in random_episode(seed):
                w.write(ev)
        Annotations(path).add(3, "look here")
        trace = open_trace(path)
        text = streamed(trace)
        assert text == whole(trace)
        assert json.loads(text)["extra"]["stripebench"]["notes"][0]["text"] == "look here"
    big = tmp_path / "big.jsonl"
    big_trace.write(big, 3000)
    assert streamed(open_trace(big)) == whole(open_trace(big))
    with TraceWriter(tmp_path / "empty.jsonl", header()):
        pass
    empty = open_trace(tmp_path / "empty.jsonl")
    assert streamed(empty) == whole(empty) and '"steps": []' in streamed(empty)


def test_a_trace_written_to_between_the_passes_exports_what_the_first_pass_saw(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    w = TraceWriter(path, header())
    w.write(ModelMessage(t=1, turn=1, text="one"))
    w.write(ToolCall(t=2, turn=1, call_id="c1", tool="shell"))
    w.write(ToolResult(t=3, turn=1, call_id="c1", tool="shell", output="ok"))
    export = AtifExport(open_trace(path))
    before = whole(open_trace(path))
    w.write(ToolResult(t=4, turn=2, call_id="c1", tool="shell", output="late"))  # would join step 1
    w.write(ModelMessage(t=5, turn=2, text="two"))
    w.close()
    out = io.StringIO()
    export.write(out)
    assert out.getvalue() == before and export.steps == 1
