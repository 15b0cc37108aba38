"""An episode of each LLM agent against the fake model server records its model time: every assistant message has
its time to first token and latency, and where-the-time-went (profile, summary, ATIF export) counts them."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from stripebench_tui.core.events import ModelMessage
from stripebench_tui.core.profile import profile
from stripebench_tui.formats.atif import atif_from_trace
from stripebench_tui.formats.open import open_episode
from stripebench_tui.formats.text import write_summary
from stripebench_tui.testing.fake_models import FakeModelServer
from stripebench_tui.testing.fake_wire import ScriptedCall, ScriptedTurn

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
async def test_an_llm_episode_records_and_shows_its_model_time(protocol: str, tmp_path: Path) -> None:
    from stripebench_tui.runtime.episode import Episode, EpisodeConfig

    turns = [ScriptedTurn("Looking.", [ScriptedCall("shell", {"command": "ls"})]), ScriptedTurn("Done.")]
    with FakeModelServer(turns) as fake:
        url = fake.url if protocol == "anthropic" else fake.openai_base_url
        episode = Episode(EpisodeConfig(env="tiny-shop", agent=protocol, episode_dir=tmp_path / "ep",
                                        agent_options={"api_key": "sk-fake-key", "base_url": url, "model": "m"}))
        result = await episode.run()
        assert all(r.streamed for r in fake.requests)
    assert result.reason == "agent_done"
    trace = open_episode(result.trace_path)
    replies = [ev for ev in trace.iter_events() if isinstance(ev, ModelMessage) and ev.role == "assistant"]
    assert [m.text for m in replies] == ["Looking.", "Done."]
    for m in replies:
        assert m.ttft is not None and m.latency is not None and 0 < m.ttft <= m.latency

    time = profile(trace.iter_events())
    assert time.summary()["model"] == pytest.approx(sum(m.latency for m in replies), abs=1e-5)
    assert time.summary()["ttft"] == pytest.approx(sum(m.ttft for m in replies), abs=1e-5)
    assert {t.turn: t.model for t in time.turns if t.model} == {m.turn: m.latency for m in replies}

    out = io.StringIO()
    write_summary(trace.state_at(None), out, profile=time)
    table = out.getvalue()[out.getvalue().index("Where the time went"):]
    all_row = next(line.split("│") for line in table.splitlines() if line.startswith("│ ") and "│  all │" in line)
    assert all_row[3].strip() == f"{time.summary()['model']:.2f}s"  # the model column

    doc = json.loads(json.dumps(atif_from_trace(trace)))
    timing = [s["metrics"]["extra"] for s in doc["steps"] if s["source"] == "agent" and "metrics" in s]
    assert timing == [{"ttft_seconds": m.ttft, "latency_seconds": m.latency} for m in replies]
    assert doc["final_metrics"]["extra"]["stripebench_time"]["model"] == time.summary()["model"]
