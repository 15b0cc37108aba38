"""External harnesses as processes behind the gateway, played by the real driver: turns, results, controls, stop, errors."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from stripebench_tui.agents import create_agent
from stripebench_tui.core.agent import Task
from stripebench_tui.core.bus import EventBus
from stripebench_tui.core.driver import Driver
from stripebench_tui.core.events import Event
from stripebench_tui.core.limits import Limits
from stripebench_tui.core.tool_types import ToolOutcome
from stripebench_tui.errors import UserError
from stripebench_tui.harness.external import ExternalAgent
from stripebench_tui.testing.fake_models import FakeModelServer
from stripebench_tui.testing.fake_wire import ScriptedCall, ScriptedTurn
from tests.gateway.conftest import REAL_KEY

pytestmark = pytest.mark.slow

REPO = str(Path(__file__).resolve().parents[2])
HARNESS = f"{sys.executable} -m stripebench_tui.testing.mini_harness"


class NoTools:
    """The harness brings its own tools: the driver never runs one."""

    async def tools(self) -> list[Any]:
        return []

    async def call(self, tool: str, arguments: dict[str, Any]) -> ToolOutcome:
        raise AssertionError(f"the driver ran {tool} itself")


def harness_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([REPO, os.path.join(REPO, "emulator")])
    env["ANTHROPIC_API_KEY"] = REAL_KEY  # present in the runner's environment; must not reach the harness
    env["OPENAI_API_KEY"] = REAL_KEY
    return env


def script() -> list[ScriptedTurn]:
    return [
        ScriptedTurn(text="I'll write the file.", tool_calls=[ScriptedCall("write_file", {"path": "{workspace}/hello.txt",
                                                                                          "content": "hello checkout"})]),
        ScriptedTurn(text="Now check it.", tool_calls=[ScriptedCall("shell", {"command": "cat hello.txt"})]),
        ScriptedTurn(text="Finished: hello.txt says hello."),
    ]


class Episode:
    def __init__(self, tmp_path: Path, turns: list[ScriptedTurn], cmd: str, protocol: str = "anthropic", **driver: Any):
        self.workspace = tmp_path / "workspace"
        self.workspace.mkdir()
        self.fake = FakeModelServer(turns, api_key=REAL_KEY, variables={"workspace": str(self.workspace)}).start()
        base = self.fake.url if protocol == "anthropic" else self.fake.openai_base_url
        self.agent: ExternalAgent = create_agent("command", cmd=cmd, protocol=protocol, base_url=base, api_key=REAL_KEY,
                                                 env=harness_env())
        self.bus = EventBus()
        self.events: list[Event] = []
        self.lines: dict[str, asyncio.Event] = {}
        self.bus.subscribe(self._seen, name="test")
        task = Task(env_id="demo", problem="Write hello.txt saying hello checkout.", tools=[], workspace=str(self.workspace))
        self.driver = Driver(agent=self.agent, executor=NoTools(), task=task, bus=self.bus,
                             limits=Limits(max_turns=20, wall_time=60), **driver)

    def _seen(self, event: Event) -> None:
        self.events.append(event)
        if event.type == "service":
            for text, flag in self.lines.items():
                if event.text == text:
                    flag.set()

    def line(self, text: str) -> asyncio.Event:
        return self.lines.setdefault(text, asyncio.Event())

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]

    def close(self) -> None:
        self.fake.stop()


@pytest.fixture
def episode(tmp_path: Path):
    made: list[Episode] = []

    def make(*args: Any, **kw: Any) -> Episode:
        made.append(Episode(tmp_path, *args, **kw))
        return made[-1]

    yield make
    for e in made:
        e.close()


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
async def test_a_harness_runs_its_own_tools_and_every_turn_is_recorded(episode, protocol: str) -> None:
    ep = episode(script(), f"{HARNESS} --protocol {protocol} {{problem}}", protocol)
    end = await ep.driver.run()
    await ep.bus.drain()

    assert end.reason == "agent_done", end.error
    assert (ep.workspace / "hello.txt").read_text() == "hello checkout"
    said = [m.text for m in ep.of("model_message") if m.role == "assistant"]
    assert said == ["I'll write the file.", "Now check it.", "Finished: hello.txt says hello."]
    calls, results = ep.of("tool_call"), ep.of("tool_result")
    assert [c.tool for c in calls] == ["write_file", "shell"]
    assert [(r.call_id, r.tool) for r in results] == [(c.call_id, c.tool) for c in calls]
    assert results[0].output == f"wrote {ep.workspace}/hello.txt" and results[1].output == "hello checkout"
    assert [c.turn for c in calls] == [r.turn for r in results] == [1, 2]
    assert all(r.duration > 0 for r in results)
    log = [s.text for s in ep.of("service") if s.service == "command"]
    assert "turn 1: 1 calls" in log or "turn 1: 2 blocks, stop tool_use" in log
    assert "done" in log and "command exited with code 0" in log
    # The real key stayed in the gateway: not in the harness's environment, not in any event.
    assert REAL_KEY not in ep.agent.process_env.values()
    assert ep.agent.process_env["ANTHROPIC_API_KEY"] == ep.agent.process_env["OPENAI_API_KEY"] != REAL_KEY
    assert REAL_KEY not in json.dumps([e.to_dict() for e in ep.events])
    assert {r.api_key for r in ep.fake.requests} == {REAL_KEY}


async def test_pause_holds_the_request_and_an_injected_note_reaches_the_model(episode) -> None:
    ep = episode(script(), f"{HARNESS} {{problem}}", start_paused=True)
    run = asyncio.ensure_future(ep.driver.run())
    await ep.agent.wait_held(1)  # the harness asked for its first turn …
    assert ep.fake.requests == []  # … and the gateway holds it while paused
    ep.driver.inject("Use port 4242.")
    ep.driver.resume()
    end = await run
    assert end.reason == "agent_done", end.error
    first = ep.fake.requests[0].body["messages"]
    assert first[-1]["content"][-1] == {"type": "text", "text": "Use port 4242."}
    assert [o.text for o in ep.of("operator") if o.action == "inject"] == ["Use port 4242."]
    assert "Use port 4242." not in json.dumps(ep.fake.requests[1].body)  # appended once, to the next request only


def _group_alive(pgid: int) -> list[int]:
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            alive.append(int(stat.parent.name))
    return alive


async def test_stop_ends_the_harness_process_group(episode) -> None:
    ep = episode(script(), f"{HARNESS} --hang-after 1 {{problem}}")
    hanging = ep.line("hanging")
    run = asyncio.ensure_future(ep.driver.run())
    await hanging.wait()
    pgid = ep.agent.process.pid
    assert len(_group_alive(pgid)) == 2  # the harness and its child
    ep.driver.stop("enough")
    end = await run
    assert end.reason == "stopped"
    assert _group_alive(pgid) == []
    assert ep.of("tool_call")[0].tool == "write_file"


async def test_a_harness_that_crashes_ends_the_episode_with_its_last_lines(episode) -> None:
    cmd = f"{sys.executable} -c \"import sys; print('cannot reach the model'); sys.exit(3)\" {{problem}}"
    ep = episode(script(), cmd)
    end = await ep.driver.run()
    assert end.reason == "error"
    assert "command exited with code 3; last output: cannot reach the model" in end.error


def test_a_missing_harness_says_how_to_install_it(monkeypatch, tmp_path: Path) -> None:
    with pytest.raises(UserError, match="'no-such-harness-xyz' was not found on PATH"):
        create_agent("command", cmd="no-such-harness-xyz --task {problem}")
    monkeypatch.setenv("STRIPEBENCH_HARNESSES", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(UserError) as caught:
        create_agent("claude-code")
    assert str(caught.value) == ("the claude-code harness is not installed: run `stripebench agents install claude-code` "
                                 "(npm install of @anthropic-ai/claude-code@2.1.332 into the stripebench cache)")


def test_an_unknown_agent_lists_the_harnesses_too() -> None:
    with pytest.raises(UserError, match="known agents: .*claude-code.*command"):
        create_agent("codex-nope")


async def test_a_harness_that_never_stops_is_ended_by_the_turn_limit(episode) -> None:
    endless = [ScriptedTurn(text=f"Step {i}.", tool_calls=[ScriptedCall("shell", {"command": f"echo {i}"})]) for i in range(10)]
    ep = episode(endless, f"{HARNESS} {{problem}}")
    ep.driver.limits = Limits(max_turns=2, wall_time=120)
    end = await ep.driver.run()
    assert end.reason == "max_turns"
    assert [r.output for r in ep.of("tool_result")] == ["0", "1"]
    assert ep.agent.process.returncode is not None and _group_alive(ep.agent.process.pid) == []
