"""A real Codex CLI (npm, pinned) offline against a scripted model through the gateway (Responses API, streamed).

The fixture installs it with our own installer (`stripebench agents install codex`'s function) into the harness
cache when it is not there yet; npm must be reachable for that first install. A model name Codex does not know
("gpt-test") gets its fallback tool set: ``exec_command`` and friends as plain function tools.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from stripebench_tui.agents import create_agent
from stripebench_tui.core.agent import Task
from stripebench_tui.core.bus import EventBus
from stripebench_tui.core.driver import Driver
from stripebench_tui.core.limits import Limits
from stripebench_tui.core.tool_types import ToolSpec
from stripebench_tui.testing.fake_models import FakeModelServer
from stripebench_tui.testing.fake_wire import ScriptedCall, ScriptedTurn
from tests.fixture_envs import FIXTURES, fixture_envs  # noqa: F401  (autouse: the fixture environments)
from tests.gateway.conftest import REAL_KEY
from tests.gateway.harness_runs import pinned_harness, run_headless, tiny_shop_commands
from tests.gateway.test_external_agent import NoTools

pytestmark = [pytest.mark.slow, pytest.mark.node, pytest.mark.drill]


@pytest.fixture(scope="module")
def codex() -> str:
    """The pinned Codex CLI, installed into the harness cache by our installer if missing."""
    return pinned_harness("codex", "0.171.0")


def test_codex_solves_tiny_shop_through_the_gateway_and_its_commands_are_turns(codex: str, tmp_path: Path) -> None:
    episode = tmp_path / "episode"
    handlers = (FIXTURES / "tiny-shop" / "solution" / "handlers.py").read_text()
    commands = tiny_shop_commands()
    turns = [ScriptedTurn(text=text, tool_calls=[ScriptedCall("exec_command", {"cmd": command})])
             for text, command in zip(["Look around.", "Implement the handler.", "Sign up Alice."], commands, strict=True)]
    turns.append(ScriptedTurn(text="Done: Alice's customer id is in submission.txt."))
    with FakeModelServer(turns, api_key=REAL_KEY) as fake:
        run_headless("codex", fake.openai_base_url, episode, "OPENAI_API_KEY", REAL_KEY, "gpt-test")
        requests = fake.requests
    assert [(r.protocol, r.path, r.api_key, r.streamed) for r in requests] == [("responses", "/v1/responses", REAL_KEY, True)] * 4
    assert requests[0].body["model"] == "gpt-test"
    assert "exec_command" in [t.get("name") for t in requests[0].body["tools"]]
    trace = episode / "trace.jsonl"
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    calls = [e for e in events if e["type"] == "tool_call"]
    assert [(c["tool"], c["arguments"]["cmd"]) for c in calls] == [("exec_command", c) for c in commands]
    results = [e for e in events if e["type"] == "tool_result"]
    assert [r["call_id"] for r in results] == [c["call_id"] for c in calls]
    assert all("Process exited with code 0" in r["output"] and not r["is_error"] for r in results), results
    assert "app.py" in results[0]["output"] and "cus_" in results[2]["output"]
    assert [e["turn"] for e in results] == [1, 2, 3]
    texts = [e["text"] for e in events if e["type"] == "model_message" and e["role"] == "assistant"]
    assert texts[-1] == "Done: Alice's customer id is in submission.txt."
    assert (episode / "workspace" / "handlers.py").read_text() == handlers
    end = events[-1]
    assert end["reason"] == "agent_done" and end["passed"] is True and end["score"] == 1.0, end
    logs = [e["text"] for e in events if e["type"] == "service" and e["service"] == "codex"]
    assert any('"type":"turn.completed"' in line for line in logs), logs[-5:]
    assert not any("github.com" in line or "chatgpt.com" in line for line in logs)  # nothing tried to phone home
    assert REAL_KEY not in trace.read_text()
    config = (episode / "codex-state" / "config.toml").read_text()  # Codex's home is the episode's, not ~/.codex
    assert fake.openai_base_url not in config and "/v1" in config  # it was given the gateway, never the upstream


async def _episode(tmp_path: Path, turns: list[ScriptedTurn], tools: list, model: str | None) -> tuple[list, list]:
    """A driver episode of Codex against ``turns``: (its events, the requests the fake model got)."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    with FakeModelServer(turns, api_key=REAL_KEY) as fake:
        agent = create_agent("codex", base_url=fake.openai_base_url, api_key=REAL_KEY, model=model)
        bus = EventBus()
        events: list = []
        bus.subscribe(events.append)
        driver = Driver(agent=agent, executor=NoTools(), task=Task(env_id="x", problem="Find the docs.", tools=tools,
                                                                   workspace=str(workspace)),
                        bus=bus, limits=Limits(max_turns=5, wall_time=120))
        end = await driver.run()
        await bus.drain()
        assert end.reason == "agent_done", end.error
        return events, fake.requests


async def test_codex_is_offered_our_mcp_servers_and_their_calls_are_turns(codex: str, tmp_path: Path) -> None:
    docs = ToolSpec("search_stripe_documentation", "Search Stripe's docs.", {"type": "object"}, server="stripe_docs")
    shell = ToolSpec("shell", "Run a command.", {"type": "object"}, server="shell")
    tool = "mcp__stripe_docs__search_stripe_documentation"  # Codex offers each MCP server's tools in a namespace
    turns = [ScriptedTurn(text="Look it up.", tool_calls=[ScriptedCall(tool, {"query": "checkout session", "limit": 2})]),
             ScriptedTurn(text="Found it.")]
    events, requests = await _episode(tmp_path, turns, [docs, shell], "gpt-test")
    spaces = [t for t in requests[0].body["tools"] if t.get("type") == "namespace"]
    assert [t["name"] for t in spaces if t["name"].startswith("mcp__")] == ["mcp__stripe_docs"]  # Codex has its own shell
    [call] = [e for e in events if e.type == "tool_call"]
    assert (call.tool, call.arguments) == (tool, {"query": "checkout session", "limit": 2})
    [result] = [e for e in events if e.type == "tool_result"]
    assert result.call_id == call.call_id and not result.is_error
    assert "checkout" in result.output.lower() and '"results"' in result.output, result.output


async def test_codex_with_its_default_model_runs_code_mode_and_its_exec_calls_are_turns(codex: str, tmp_path: Path) -> None:
    # With no --model Codex picks its own default, which offers one free-form `exec` tool (JavaScript calling its tools).
    script = 'const r = await tools.exec_command({cmd: "echo hello > hello.txt && cat hello.txt"}); text(r);'
    turns = [ScriptedTurn(text="Write it.", tool_calls=[ScriptedCall("exec", {"input": script})]), ScriptedTurn(text="Done.")]
    events, requests = await _episode(tmp_path, turns, [], None)
    assert requests[1].body["model"] == requests[0].body["model"] != "gpt-test"
    [call] = [e for e in events if e.type == "tool_call"]
    assert (call.tool, call.arguments) == ("exec", {"input": script})
    [result] = [e for e in events if e.type == "tool_result"]
    assert result.call_id == call.call_id and '"exit_code":0' in result.output, result.output
    assert '"output":"hello\\n"' in result.output, result.output  # no login shell: no profile noise before it
    assert (tmp_path / "workspace" / "hello.txt").read_text() == "hello\n"


async def test_pause_holds_codex_and_an_injected_note_reaches_its_next_request(codex: str, tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    with FakeModelServer([ScriptedTurn(text="Noted.")], api_key=REAL_KEY) as fake:
        agent = create_agent("codex", base_url=fake.openai_base_url, api_key=REAL_KEY, model="gpt-test")
        bus = EventBus()
        driver = Driver(agent=agent, executor=NoTools(),
                        task=Task(env_id="x", problem="Say hi.", tools=[], workspace=str(workspace)),
                        bus=bus, limits=Limits(max_turns=5, wall_time=120), start_paused=True)
        run = asyncio.ensure_future(driver.run())
        await agent.wait_held(1)  # Codex asked for its first turn …
        assert fake.requests == []  # … and the gateway holds it while paused
        driver.inject("Use port 4242.")
        driver.resume()
        end = await run
        requests = fake.requests
    assert end.reason == "agent_done", end.error
    assert requests[0].body["input"][-1] == {"type": "message", "role": "user", "content": "Use port 4242."}
