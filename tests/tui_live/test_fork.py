"""Re-execute and fork: same seed, same ids; the first divergence is flagged; the fork continues with another agent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stripebench_tui.runtime.episode import EpisodeConfig, run_episode
from stripebench_tui.runtime.fork import fork_config, fork_episode

from .helpers import trace_events

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An oracle episode of tiny-shop (4 turns: view, create, shell that signs Alice up, done)."""
    import asyncio
    import os

    from .conftest import FIXTURES

    os.environ["STRIPEBENCH_ENVIRONMENTS"] = str(FIXTURES)
    os.environ["STRIPEBENCH_GRADERS"] = str(FIXTURES / "graders")
    out = tmp_path_factory.mktemp("recorded")
    result = asyncio.run(run_episode(EpisodeConfig(env="tiny-shop", agent="oracle", seed=7, episode_dir=out / "ep")))
    assert result.passed
    return result.trace_path


def _customers(events: list[dict]) -> list[str]:
    return [e["object_id"] for e in events if e["type"] == "stripe_object" and e["object_type"] == "customer"]


async def test_re_execute_reproduces_ids_and_reports_no_divergence(recorded: Path, tmp_path: Path) -> None:
    config = fork_config(recorded, "noop", episode_dir=tmp_path / "fork")
    assert config.seed == 7 and config.env == "tiny-shop"
    episode = fork_episode(recorded, 3, config)
    result = await episode.run()
    events = trace_events(result.trace_path)
    header = json.loads(result.trace_path.read_text().splitlines()[0])
    assert header["extra"]["forked_from"] == {"trace": str(recorded.resolve()), "turn": 3}
    assert header["agent"] == "noop"
    original = trace_events(recorded)
    assert _customers(events) and _customers(events)[0] == _customers(original)[0]
    divergences = [e for e in events if e["type"] == "operator" and e["action"] == "divergence"]
    assert len(divergences) == 1 and divergences[0]["details"]["diverged"] is False, divergences
    assert episode.fork.checker.divergence is None
    # The noop agent took over after the replayed turns and saw the summary of them.
    messages = [e for e in events if e["type"] == "model_message" and e["role"] == "assistant"]
    assert "No-op" in messages[-1]["text"] or "no-op" in messages[-1]["text"].lower()
    calls = [e for e in events if e["type"] == "tool_call"]
    assert [c["tool"] for c in calls] == [c["tool"] for c in original if c["type"] == "tool_call"][:3]


async def test_an_altered_recorded_result_is_the_first_divergence(recorded: Path, tmp_path: Path) -> None:
    lines = recorded.read_text().splitlines()
    altered = []
    changed = False
    for line in lines:
        d = json.loads(line)
        if d.get("type") == "tool_result" and d.get("tool") == "view_file" and not changed:
            d["output"] = d["output"] + "\n# a line that was never there"
            changed = True
        altered.append(json.dumps(d))
    assert changed
    trace = tmp_path / "altered" / "trace.jsonl"
    trace.parent.mkdir()
    trace.write_text("\n".join(altered) + "\n")
    first_view = next(json.loads(x) for x in lines if '"view_file"' in x and '"tool_result"' in x)
    episode = fork_episode(trace, 3, fork_config(trace, "noop", episode_dir=tmp_path / "fork"))
    result = await episode.run()
    divergences = [e for e in trace_events(result.trace_path) if e["type"] == "operator" and e["action"] == "divergence"]
    assert len(divergences) == 1  # only the first is reported
    d = divergences[0]
    assert d["details"]["diverged"] is True and d["details"]["recorded_turn"] == first_view["turn"]
    assert d["details"]["differs"] == ["output"] and d["details"]["tool"] == "view_file"
    assert "view_file" in d["text"]


async def test_fork_key_in_the_replay_tui_opens_a_live_fork(recorded: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from stripebench_tui.core.trace import open_trace
    from stripebench_tui.tui.app import create_app
    from stripebench_tui.tui.screens.live_screen import LiveEpisodeScreen
    from stripebench_tui.tui.source import TraceSource

    from .helpers import wait_for

    monkeypatch.chdir(tmp_path)  # the fork's episode directory goes under ./episodes
    app = create_app(TraceSource(open_trace(recorded)))
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for(pilot, lambda: app.episode.turns is not None and app.episode.indexed, what="the replay")
        await pilot.press("right", "right")
        assert app.episode.turn.index == 2
        await pilot.press("F")
        await pilot.pause(0.2)
        await pilot.press("down")  # human → noop
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, LiveEpisodeScreen), what="the live fork")
        live = app.screen
        await wait_for(pilot, lambda: live.result is not None, timeout=60, what="the fork to end")
        await pilot.pause(0.3)
        notes = [op for op in live.live_state.operator_actions if op.action == "divergence"]
        assert notes and notes[0].details["diverged"] is False
        header = json.loads(live.result.trace_path.read_text().splitlines()[0])
        assert header["extra"]["forked_from"]["turn"] == 2
        await pilot.press("q")  # leaves the fork, back to the replay
        await wait_for(pilot, lambda: not isinstance(app.screen, LiveEpisodeScreen), what="the replay again")
