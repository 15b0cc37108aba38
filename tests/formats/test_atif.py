"""ATIF export and import: our traces round-trip whole; foreign trajectories import; bad ones fail on one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stripebench_tui.core.events import ModelMessage, ToolCall, ToolResult
from stripebench_tui.core.state import reduce
from stripebench_tui.core.trace import NotATraceError, TraceError, TraceWriter, open_trace
from stripebench_tui.formats.atif import ATIF_VERSION, AtifError, atif_from_trace, events_from_atif
from stripebench_tui.formats.open import open_episode
from tests.core.episodes import header, random_episode, summary

REPLAYS = Path(__file__).resolve().parents[2] / "replays"

FOREIGN = {
    "schema_version": "ATIF-v1.4",
    "session_id": "025B810F-B3A2-4C67-93C0-FE7A142A947A",
    "agent": {"name": "harbor-agent", "version": "1.0.0", "model_name": "gemini-2.5-flash", "extra": {}},
    "notes": "two steps",
    "final_metrics": {"total_prompt_tokens": 1120, "total_completion_tokens": 124, "total_steps": 3},
    "steps": [
        {"step_id": 1, "timestamp": "2025-10-11T10:30:00Z", "source": "user", "message": "Create hello.txt"},
        {"step_id": 2, "timestamp": "2025-10-11T10:30:02Z", "source": "agent", "model_name": "gemini-2.5-flash",
         "message": "Writing the file.", "reasoning_content": "One shell call will do.",
         "tool_calls": [{"tool_call_id": "call_1", "function_name": "bash", "arguments": {"cmd": "echo hi > hello.txt"}}],
         "observation": {"results": [{"source_call_id": "call_1", "content": ""}]},
         "metrics": {"prompt_tokens": 520, "completion_tokens": 80, "cached_tokens": 200, "cost_usd": 0.00045}},
        {"step_id": 3, "timestamp": "2025-10-11T10:30:05Z", "source": "agent", "message": "Done.",
         "metrics": {"prompt_tokens": 600, "completion_tokens": 44, "extra": {"reasoning_tokens": 12}}},
    ],
}


@pytest.mark.parametrize("name", ["checkout-migration-oracle", "checkout-migration-400"])
def test_exported_sample_imports_back_whole(tmp_path: Path, name: str) -> None:
    trace = open_trace(REPLAYS / name)
    doc = atif_from_trace(trace)
    assert doc["schema_version"] == ATIF_VERSION and [s["step_id"] for s in doc["steps"]] == list(range(1, len(doc["steps"]) + 1))
    out = tmp_path / "x.atif.json"
    out.write_text(json.dumps(doc, indent=2))
    back = open_episode(out)
    assert back.in_memory and back.header.extra["imported_from"] == "atif"
    assert back.header.env == trace.header.env and back.header.model == trace.header.model
    assert summary(back.state_at()) == summary(trace.state_at())
    original = {e.seq: e for e in trace.iter_events()}
    for ev in back.iter_events():
        assert type(ev) is type(original[ev.seq])
        if isinstance(ev, ToolResult):
            assert ev.output == trace.full_output(original[ev.seq])  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", range(4))
def test_random_episodes_round_trip(tmp_path: Path, seed: int) -> None:
    path = tmp_path / "t.jsonl"
    with TraceWriter(path, header()) as w:
        for ev in random_episode(seed):
            w.write(ev)
    trace = open_trace(path)
    header_, events = events_from_atif(json.loads(json.dumps(atif_from_trace(trace))))
    assert summary(reduce([header_, *events])) == summary(trace.state_at())


def test_foreign_trajectory_imports_without_stripe_objects_or_verdicts(tmp_path: Path) -> None:
    path = tmp_path / "foreign.json"
    path.write_text(json.dumps(FOREIGN, indent=2))
    trace = open_episode(path)
    assert trace.header.agent == "harbor-agent" and trace.header.model == "gemini-2.5-flash"
    events = list(trace.iter_events())
    assert [type(e).__name__ for e in events] == ["ModelMessage", "ModelMessage", "ToolCall", "ToolResult", "ModelMessage"]
    user, agent, call, result, done = events
    assert isinstance(user, ModelMessage) and user.role == "user" and user.turn == 0 and user.t == 0.0
    assert isinstance(agent, ModelMessage)
    assert agent.reasoning == "One shell call will do." and agent.tokens_in == 520 and agent.t == 2.0
    assert isinstance(call, ToolCall) and call.arguments == {"cmd": "echo hi > hello.txt"} and call.turn == 1
    assert isinstance(result, ToolResult) and result.call_id == "call_1" and result.tool == "bash"
    assert done.turn == 2 and done.t == 5.0
    state = trace.state_at()
    assert state.objects == {} and state.verdicts == {} and state.ended is None
    assert state.totals.tokens_in == 1120 and [t.index for t in state.turns] == [0, 1, 2]
    assert [e.turn for e in trace.events_for_turn(1)] == [1, 1, 1]


def test_multimodal_content_parts_become_text() -> None:
    doc = json.loads(json.dumps(FOREIGN))
    doc["schema_version"] = "ATIF-v1.6"
    doc["steps"][1]["observation"]["results"][0]["content"] = [{"type": "text", "text": "saved"},
                                                               {"type": "image", "source": {"path": "a.png"}}]
    _, events = events_from_atif(doc)
    (result,) = [e for e in events if isinstance(e, ToolResult)]
    assert result.output == "saved\n[image]"


def _bad(mutate) -> dict:
    doc = json.loads(json.dumps(FOREIGN))
    mutate(doc)
    return doc


@pytest.mark.parametrize(
    "doc, where",
    [
        (_bad(lambda d: d.update(surprise=1)), "root: unknown field 'surprise'"),
        (_bad(lambda d: d["steps"][1].update(mood="happy")), "steps[1]: unknown field 'mood'"),
        (_bad(lambda d: d["steps"][1]["tool_calls"][0].update(kind="x")), "steps[1].tool_calls[0]: unknown field 'kind'"),
        (_bad(lambda d: d["steps"][1]["metrics"].update(vibes=3)), "steps[1].metrics: unknown field 'vibes'"),
        (_bad(lambda d: d["agent"].update(color="red")), "agent: unknown field 'color'"),
        (_bad(lambda d: d.pop("steps")), "missing required field 'steps'"),
        (_bad(lambda d: d["steps"][0].update(source="robot")), "'source' must be system, user or agent"),
        (_bad(lambda d: d["steps"][1]["tool_calls"][0].update(arguments="echo")), "'arguments' must be an object"),
        (_bad(lambda d: d["steps"][1].update(step_id="two")), "'step_id' has the wrong type"),
        (_bad(lambda d: d["steps"][1]["metrics"].update(prompt_tokens="many")), "'prompt_tokens' has the wrong type"),
        (_bad(lambda d: d.update(schema_version="ATIF-v9.0")), "unsupported schema_version"),
        (_bad(lambda d: d.update(steps={})), "'steps' must be an array"),
        (_bad(lambda d: d.update(extra={"stripebench": {"events": [{"type": "nonsense"}]}})), "extra.stripebench.events[0]"),
        ([1, 2], "root: expected an object"),
    ],
)
def test_bad_atif_is_one_line_naming_where(doc, where: str) -> None:
    with pytest.raises(AtifError) as err:
        events_from_atif(doc, "run.json")
    msg = str(err.value)
    assert msg.startswith("run.json: ATIF ") and where in msg and "\n" not in msg
    assert isinstance(err.value, TraceError)


def test_atif_file_that_is_not_json_fails_cleanly(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"schema_version": "ATIF-v1.4", "steps": [\n')
    with pytest.raises(TraceError, match=r"bad.json:\d+: not valid JSON"):
        open_episode(path)


def test_the_core_reader_leaves_atif_to_open_episode(tmp_path: Path) -> None:
    path = tmp_path / "foreign.json"
    path.write_text(json.dumps(FOREIGN, indent=2))
    with pytest.raises(NotATraceError, match=r"foreign.json:1: ") as err:
        open_trace(path)
    assert err.value.path == path
    assert open_episode(path).header.agent == "harbor-agent"
