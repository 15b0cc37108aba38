"""Re-execute and fork: same seed, same ids; the first divergence is flagged; the fork continues with another agent."""

from __future__ import annotations

import json
import subprocess
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
    # without checkpoints: these tests are about re-execution (a checkpointed episode forks by restoring)
    result = asyncio.run(run_episode(EpisodeConfig(env="tiny-shop", agent="oracle", seed=7, episode_dir=out / "ep",
                                                   checkpoint="off")))
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
    # the recorded episode knows its fork (noted in its forks.jsonl: the fork went elsewhere), re-executed at turn 3
    from stripebench_tui.formats.lineage import read_lineage

    forks = {c.path: c for c in read_lineage(recorded).root.children}
    fork = forks[result.trace_path.resolve()]
    assert (fork.turn, fork.mode, fork.ended) == (3, "", True)


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
    from stripebench_tui.tui.apps.replay_app import create_app
    from stripebench_tui.tui.screens.live_screen import LiveEpisodeScreen
    from stripebench_tui.tui.sources.episode_source import TraceSource

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


# `replay --fork-at` without a terminal: headless reads stdin like `run --headless`; the TUI is refused.

def _stripebench(*args: str, cwd: Path, stdin_text: str | None = None) -> subprocess.CompletedProcess[str]:
    import os
    import sys

    from .conftest import FIXTURES

    env = {**os.environ, "STRIPEBENCH_ENVIRONMENTS": str(FIXTURES), "STRIPEBENCH_GRADERS": str(FIXTURES / "graders")}
    env.pop("STRIPE_SECRET_KEY", None)
    return subprocess.run([sys.executable, "-m", "stripebench_tui", *args], cwd=cwd, env=env, text=True,
                          capture_output=True, timeout=120,
                          **({"input": stdin_text} if stdin_text is not None else {"stdin": subprocess.DEVNULL}))


def test_headless_fork_with_the_oracle_completes_with_no_stdin(recorded: Path, tmp_path: Path) -> None:
    # (given the episode directory, which stands for its trace.jsonl)
    r = _stripebench("replay", str(recorded.parent), "--fork-at", "2", "--agent", "oracle", "--headless", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "── turn 1" in r.stdout and "episode ended" in r.stdout
    assert "divergence: none" in r.stderr and "trace: " in r.stderr
    header = json.loads(next((tmp_path / "episodes").glob("*/trace.jsonl")).read_text().splitlines()[0])
    assert header["agent"] == "oracle" and header["extra"]["forked_from"] == {"trace": str(recorded.resolve()), "turn": 2}


def test_headless_fork_with_the_human_takes_its_turns_from_stdin(recorded: Path, tmp_path: Path) -> None:
    r = _stripebench("replay", str(recorded), "--fork-at", "2", "--agent", "human", "--headless", cwd=tmp_path,
                     stdin_text='say taking over from the replay\nview_file {"path": "app.py"}\ndone\n')
    assert r.returncode in (0, 1), r.stderr  # scored either way; it ended instead of waiting
    assert "assistant: taking over from the replay" in r.stdout
    events = trace_events(next((tmp_path / "episodes").glob("*/trace.jsonl")))
    calls = [e["tool"] for e in events if e["type"] == "tool_call"]
    assert len(calls) == 3 and calls[-1] == "view_file"  # two replayed calls, then the typed one
    assert any(e["type"] == "episode_end" for e in events)


def test_headless_fork_with_the_human_ends_at_the_end_of_stdin(recorded: Path, tmp_path: Path) -> None:
    r = _stripebench("replay", str(recorded), "--fork-at", "2", "--agent", "human", "--headless", cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr
    assert "episode ended" in r.stdout and "Traceback" not in r.stderr


def test_fork_without_headless_and_without_a_terminal_is_refused_on_one_line(recorded: Path, tmp_path: Path) -> None:
    import time

    started = time.monotonic()
    r = _stripebench("replay", str(recorded), "--fork-at", "2", cwd=tmp_path)  # the human, the TUI, no terminal
    assert time.monotonic() - started < 30
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("stripebench: ") and "--headless" in lines[0], r.stderr
    assert r.stdout == "" and not (tmp_path / "episodes").exists()  # refused before anything started


async def test_fork_to_the_human_from_the_replay_tui_takes_typed_calls(recorded: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from stripebench_tui.core.trace import open_trace
    from stripebench_tui.tui.apps.replay_app import create_app
    from stripebench_tui.tui.screens.live_screen import LiveEpisodeScreen
    from stripebench_tui.tui.sources.episode_source import TraceSource

    from .helpers import wait_for

    monkeypatch.chdir(tmp_path)
    app = create_app(TraceSource(open_trace(recorded)))
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for(pilot, lambda: app.episode.turns is not None and app.episode.indexed, what="the replay")
        await pilot.press("right", "right")
        await pilot.press("F")
        await pilot.pause(0.2)
        await pilot.press("enter")  # the first choice: human
        await wait_for(pilot, lambda: isinstance(app.screen, LiveEpisodeScreen), what="the live fork")
        live = app.screen
        fork = live.episode.agent
        assert fork.inner.name == "human"
        # The replayed turns run by themselves; then the fork waits on the human, who is reachable here.
        await wait_for(pilot, lambda: fork.handed_over and live.live_state.turns and
                       sum(len(t.calls) for t in live.live_state.turns) == 2, timeout=60, what="the hand-over")
        await pilot.press("t")
        await pilot.pause(0.2)
        await pilot.press(*"done", "enter")
        await wait_for(pilot, lambda: live.result is not None, timeout=60, what="the fork to end")
        events = trace_events(live.result.trace_path)
        assert [e["tool"] for e in events if e["type"] == "tool_call"] == \
            [e["tool"] for e in trace_events(recorded) if e["type"] == "tool_call"][:2]
        assert events[-1]["type"] == "episode_end"
        await pilot.press("q")
        await wait_for(pilot, lambda: not isinstance(app.screen, LiveEpisodeScreen), what="the replay again")
