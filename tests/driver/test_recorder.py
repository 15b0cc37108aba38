"""The recorder writes exactly the published events; a killed run leaves a readable trace."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stripebench_tui.core.events import EpisodeEnd, GraderVerdict, Header, ToolResult
from stripebench_tui.core.recorder import Recorder, RecorderError
from stripebench_tui.core.trace import open_trace

from .scripted import ScriptedAgent, call, make_driver, turn

HERE = Path(__file__).parent


def recorded_driver(tmp_path, agent, **kwargs):
    driver, seen = make_driver(agent, **kwargs)
    recorder = Recorder.create(tmp_path / "ep.jsonl", Header(env="test", agent="scripted")).attach(driver.bus)
    driver.recorder = recorder
    return driver, seen, recorder


async def test_the_trace_holds_exactly_the_published_events(tmp_path):
    async def grader(driver):
        await driver.bus.publish(GraderVerdict(criterion="c", status="pass", trigger="turn_end"))

    agent = ScriptedAgent([turn(call("c1", cmd="ls"), text="hi", tokens_in=3), turn(call("c2", cmd="pwd")), turn(done=True)])
    driver, seen, recorder = recorded_driver(tmp_path, agent, turn_end_hooks=[grader])
    driver.inject("a note")
    await driver.run()
    assert recorder.closed

    trace = open_trace(tmp_path / "ep.jsonl")
    assert trace.header.env == "test" and not trace.truncated
    events = list(trace.iter_events())
    assert [e.to_dict() for e in events] == [e.to_dict() for e in seen.events]
    assert isinstance(events[-1], EpisodeEnd) and trace.last_event.to_dict() == events[-1].to_dict()
    assert trace.state_at().turns[-1].index == driver.turn


async def test_the_recorder_catches_up_when_closed_during_cancellation(tmp_path):
    started = asyncio.Event()

    async def hang(observations):
        started.set()
        await asyncio.Event().wait()

    agent = ScriptedAgent([turn(call("c1")), hang])
    driver, seen, recorder = recorded_driver(tmp_path, agent)
    task = asyncio.create_task(driver.run())
    await asyncio.wait_for(started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    events = list(open_trace(tmp_path / "ep.jsonl").iter_events())
    assert [e.seq for e in events] == list(range(len(events)))
    assert isinstance(events[-1], EpisodeEnd) and events[-1].error == "cancelled"


async def test_a_recorder_that_cannot_write_ends_the_episode_with_an_error(tmp_path):
    agent = ScriptedAgent([turn(call("c1"))], repeat_last=True)
    driver, seen, recorder = recorded_driver(tmp_path, agent)
    real_write = recorder.writer.write

    def write(event):
        if isinstance(event, ToolResult) and event.call_id == "c1" and len(agent.seen) >= 2:
            raise OSError(28, "No space left on device")
        return real_write(event)

    recorder.writer.write = write
    end = await asyncio.wait_for(driver.run(), 5)
    assert end.reason == "error" and "No space left on device" in end.error
    assert len(agent.seen) == 2  # it stopped at the turn that could not be recorded
    events = list(open_trace(tmp_path / "ep.jsonl").iter_events())
    assert events and [e.seq for e in events] == list(range(len(events)))


async def test_attaching_late_is_refused(tmp_path):
    driver, _ = make_driver(ScriptedAgent([]))
    await driver.bus.publish(GraderVerdict())
    recorder = Recorder.create(tmp_path / "late.jsonl", Header())
    with pytest.raises(RecorderError):
        recorder.attach(driver.bus)
    recorder.close()


def test_kill_9_mid_episode_leaves_a_readable_trace(tmp_path):
    path = tmp_path / "killed.jsonl"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE.parents[1]), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen([sys.executable, str(HERE / "slow_episode.py"), str(path)], env=env, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if path.exists() and path.read_bytes().count(b'"tool_result"') >= 5:
                break
            assert proc.poll() is None, proc.stderr.read().decode()
            time.sleep(0.02)
        else:
            pytest.fail("the episode did not get going")
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL

    trace = open_trace(path)
    events = list(trace.iter_events())
    assert trace.header.env == "slow"
    assert [e.seq for e in events] == list(range(len(events)))
    assert not any(isinstance(e, EpisodeEnd) for e in events)  # it really died mid-episode
    results = [e for e in events if isinstance(e, ToolResult)]
    assert len(results) >= 5
    state = trace.state_at()
    assert state.ended is None and len([t for t in state.turns if t.index >= 1]) >= 5
