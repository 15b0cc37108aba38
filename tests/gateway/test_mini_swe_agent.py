"""A real mini-swe-agent (PyPI, pinned) offline against a scripted model through the OpenAI side of the gateway.

The fixture installs it with our own installer (`stripebench agents install mini-swe-agent`'s function) into a
virtualenv in the harness cache when it is not there yet; PyPI must be reachable for that first install.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from stripebench_tui.agents import create_agent
from stripebench_tui.core.agent import Task
from stripebench_tui.core.bus import EventBus
from stripebench_tui.core.driver import Driver
from stripebench_tui.core.limits import Limits
from stripebench_tui.testing.fake_models import FakeModelServer
from stripebench_tui.testing.fake_wire import ScriptedCall, ScriptedTurn
from tests.fixture_envs import FIXTURES, fixture_envs  # noqa: F401  (autouse: the fixture environments)
from tests.gateway.conftest import REAL_KEY
from tests.gateway.harness_runs import pinned_harness, run_headless, tiny_shop_commands
from tests.gateway.test_claude_code import _processes_with
from tests.gateway.test_external_agent import NoTools

pytestmark = [pytest.mark.slow, pytest.mark.drill]
SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"  # mini-swe-agent's way of saying it is done


@pytest.fixture(scope="module")
def mini() -> str:
    """The pinned mini-swe-agent, installed into its own venv in the harness cache by our installer if missing."""
    return pinned_harness("mini-swe-agent", "2.4.6")


def test_mini_swe_agent_solves_tiny_shop_and_its_bash_calls_are_turns(mini: str, tmp_path: Path) -> None:
    episode = tmp_path / "episode"
    handlers = (FIXTURES / "tiny-shop" / "solution" / "handlers.py").read_text()
    commands = tiny_shop_commands() + [SUBMIT]
    turns = [ScriptedTurn(text=text, tool_calls=[ScriptedCall("bash", {"command": command})])
             for text, command in zip(["Look around.", "Implement the handler.",
                                       "Sign up Alice.", "Submit."], commands, strict=True)]
    with FakeModelServer(turns, api_key=REAL_KEY) as fake:
        run_headless("mini-swe-agent", fake.openai_base_url, episode, "OPENAI_API_KEY", REAL_KEY, "gpt-test")
        requests = fake.requests
    assert [(r.protocol, r.path, r.api_key) for r in requests] == [("openai", "/v1/chat/completions", REAL_KEY)] * 4
    assert requests[0].body["model"] == "gpt-test"  # litellm's openai/ provider prefix is not sent
    assert [t["function"]["name"] for t in requests[0].body["tools"]] == ["bash"]
    trace = episode / "trace.jsonl"
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    calls = [e for e in events if e["type"] == "tool_call"]
    assert [(c["tool"], c["arguments"]["command"]) for c in calls] == [("bash", c) for c in commands]
    results = [e for e in events if e["type"] == "tool_result"]
    assert [r["call_id"] for r in results] == [c["call_id"] for c in calls]
    assert "app.py" in results[0]["output"] and "Request handlers" in results[0]["output"], results[0]
    assert '"returncode": 0' in results[1]["output"] and not results[1]["is_error"]
    assert "cus_" in results[2]["output"], results[2]
    # It exits on its submit command without another model request: that call's result never reaches the wire.
    assert results[3]["is_error"] and "ended before sending one" in results[3]["output"]
    texts = [e["text"] for e in events if e["type"] == "model_message" and e["role"] == "assistant" and e["text"]]
    assert texts == ["Look around.", "Implement the handler.", "Sign up Alice.", "Submit."]
    assert (episode / "workspace" / "handlers.py").read_text() == handlers
    end = events[-1]
    assert end["reason"] == "agent_done" and end["passed"] is True and end["score"] == 1.0, end
    logs = [e["text"] for e in events if e["type"] == "service" and e["service"] == "mini-swe-agent"]
    assert any("mini-swe-agent version 2.4.6" in line for line in logs), logs[:5]
    assert REAL_KEY not in trace.read_text()


async def test_pause_inject_and_stop_while_mini_swe_agent_runs_a_command_leave_no_process(mini: str, tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    marker = "31337"
    command = f"python3 -c 'import time; time.sleep({marker})'"  # mini runs each command in a session of its own
    turns = [ScriptedTurn(text="Wait a while.", tool_calls=[ScriptedCall("bash", {"command": command})])]
    with FakeModelServer(turns, api_key=REAL_KEY) as fake:
        agent = create_agent("mini-swe-agent", base_url=fake.openai_base_url, api_key=REAL_KEY,
                             env={**os.environ, "OPENAI_API_KEY": REAL_KEY})
        bus = EventBus()
        called = asyncio.Event()
        bus.subscribe(lambda e: called.set() if e.type == "tool_call" else None)
        driver = Driver(agent=agent, executor=NoTools(),
                        task=Task(env_id="x", problem="Wait.", tools=[], workspace=str(workspace)),
                        bus=bus, limits=Limits(max_turns=5, wall_time=120), start_paused=True)
        run = asyncio.ensure_future(driver.run())
        await agent.wait_held(1)  # mini asked for its first turn …
        assert fake.requests == []  # … and the gateway holds it while paused
        driver.inject("Use port 4242.")
        driver.resume()
        await called.wait()
        assert fake.requests[0].body["messages"][-1] == {"role": "user", "content": "Use port 4242."}
        while not _processes_with(marker):  # mini starts the command after the reply; poll /proc for it
            assert not run.done(), f"the episode ended before the command ran: {run.result()}"
            await asyncio.sleep(0.05)
        assert REAL_KEY not in agent.process_env.values()
        driver.stop("enough")
        end = await run
    assert end.reason == "stopped"
    assert _processes_with(marker) == []
    assert agent.process is not None and agent.process.returncode is not None
