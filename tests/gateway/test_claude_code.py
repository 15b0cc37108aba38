"""A real Claude Code (npm, pinned) offline against a scripted model through the gateway.

The fixture installs it with our own installer (`stripebench agents install claude-code`'s
function) into the harness cache when it is not there yet; npm must be reachable.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stripebench_tui.agents import create_agent
from stripebench_tui.core.agent import Task
from stripebench_tui.core.bus import EventBus
from stripebench_tui.core.driver import Driver
from stripebench_tui.core.limits import Limits
from stripebench_tui.harness.harnesses import CLAUDE_CODE, CLAUDE_CODE_VERSION, install_harness
from stripebench_tui.testing.fake_models import FakeModelServer
from stripebench_tui.testing.fake_wire import ScriptedCall, ScriptedTurn
from tests.fixture_envs import FIXTURES, fixture_envs  # noqa: F401  (autouse: the fixture environments)
from tests.gateway.conftest import REAL_KEY
from tests.gateway.test_external_agent import NoTools
from tests.gateway.test_external_episode import SIGN_UP

pytestmark = [pytest.mark.slow, pytest.mark.node, pytest.mark.drill]
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def claude_code() -> str:
    """The pinned Claude Code, installed into the harness cache by our installer if missing."""
    if CLAUDE_CODE.locate() is None:
        install_harness("claude-code")
    path = CLAUDE_CODE.locate()
    assert path is not None, "the claude-code install did not produce a `claude` executable"
    version = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60).stdout
    assert version.startswith(CLAUDE_CODE_VERSION), version
    return path


def test_claude_code_solves_tiny_shop_through_the_gateway_and_the_trace_replays(claude_code: str, tmp_path: Path) -> None:
    episode = tmp_path / "episode"
    handlers = (FIXTURES / "tiny-shop" / "solution" / "handlers.py").read_text()
    turns = [  # Claude Code's Write refuses to overwrite a file it has not read
        ScriptedTurn(text="Let me read the handlers.",
                     tool_calls=[ScriptedCall("Read", {"file_path": "{workspace}/handlers.py"})]),
        ScriptedTurn(text="I'll implement the handler.",
                     tool_calls=[ScriptedCall("Write", {"file_path": "{workspace}/handlers.py", "content": handlers})]),
        ScriptedTurn(text="Say which API it uses.", tool_calls=[ScriptedCall("Edit", {
            "file_path": "{workspace}/handlers.py", "old_string": "Request handlers of the tiny shop.",
            "new_string": "Request handlers of the tiny shop (Stripe customers API)."})]),
        ScriptedTurn(text="Now sign up Alice.",
                     tool_calls=[ScriptedCall("Bash", {"command": SIGN_UP, "description": "Sign up"})]),
        ScriptedTurn(text="Done: Alice's customer id is in submission.txt."),
    ]
    with FakeModelServer(turns, api_key=REAL_KEY, variables={"workspace": str(episode / "workspace")}) as fake:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "emulator")]), "ANTHROPIC_API_KEY": REAL_KEY}
        done = subprocess.run([sys.executable, "-m", "stripebench_tui", "run", "tiny-shop", "--headless", "--agent",
                               "claude-code",
                               "--base-url", fake.url, "--model", "claude-sonnet-4-5", "--episode-dir", str(episode)],
                              capture_output=True, text=True, timeout=300, env=env, cwd=REPO)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
        model_calls = [r for r in fake.requests if r.protocol == "anthropic"]
        assert [r.query for r in model_calls] == ["beta=true"] * 5
        assert {r.api_key for r in fake.requests} == {REAL_KEY}
    trace = episode / "trace.jsonl"
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    assert [e["tool"] for e in events if e["type"] == "tool_call"] == ["Read", "Write", "Edit", "Bash"]
    results = [e for e in events if e["type"] == "tool_result"]
    assert "def subscribe" in results[0]["output"]
    assert "updated successfully" in results[1]["output"] or "created successfully" in results[1]["output"], results[1]
    assert "updated" in results[2]["output"] and not results[2]["is_error"], results[2]
    assert results[3]["output"].startswith("cus_"), results[3]
    assert [e["turn"] for e in events if e["type"] == "tool_result"] == [1, 2, 3, 4]
    assert "customers API" in (episode / "workspace" / "handlers.py").read_text()
    assert events[-1]["reason"] == "agent_done" and events[-1]["passed"] is True
    assert any(e["type"] == "service" and e["service"] == "claude-code" and '"type":"system"' in e["text"] for e in events)
    assert REAL_KEY not in trace.read_text()
    summary = subprocess.run([sys.executable, "-m", "stripebench_tui", "replay", str(trace), "--summary"],
                             capture_output=True, text=True, timeout=120,
                             env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "emulator")])})
    assert summary.returncode == 0, summary.stderr
    assert "Bash" in summary.stdout and "Write" in summary.stdout


def _processes_with(marker: str) -> list[int]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            state = (cmdline.parent / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in text and state != "Z":
            found.append(int(cmdline.parent.name))
    return found


async def test_stop_while_claude_code_runs_a_command_leaves_no_process(claude_code: str, tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    marker = "31337"  # (Claude Code refuses a bare `sleep N`)
    command = f"python3 -c 'import time; time.sleep({marker})'"
    turns = [ScriptedTurn(text="Wait a while.", tool_calls=[ScriptedCall("Bash", {"command": command, "description": "wait"})])]
    with FakeModelServer(turns, api_key=REAL_KEY) as fake:
        agent = create_agent("claude-code", base_url=fake.url, api_key=REAL_KEY, model="claude-sonnet-4-5",
                             env={**os.environ, "ANTHROPIC_API_KEY": REAL_KEY})
        bus = EventBus()
        called = asyncio.Event()
        bus.subscribe(lambda e: called.set() if e.type == "tool_call" else None)
        driver = Driver(agent=agent, executor=NoTools(),
                        task=Task(env_id="x", problem="Wait.", tools=[], workspace=str(workspace)),
                        bus=bus, limits=Limits(max_turns=5, wall_time=120))
        run = asyncio.ensure_future(driver.run())
        await called.wait()
        while not _processes_with(marker):  # Claude Code starts the command after the reply; poll /proc for it
            assert not run.done(), f"the episode ended before the command ran: {run.result()}"
            await asyncio.sleep(0.05)
        assert REAL_KEY not in agent.process_env.values()
        driver.stop("enough")
        end = await run
    assert end.reason == "stopped"
    assert _processes_with(marker) == []
    assert agent.process is not None and agent.process.returncode is not None


async def test_claude_code_is_offered_our_mcp_servers_and_its_calls_are_turns(claude_code: str, tmp_path: Path) -> None:
    from stripebench_tui.core.tool_types import ToolSpec

    workspace = tmp_path / "workspace"
    workspace.mkdir()
    docs = ToolSpec("search_stripe_documentation", "Search Stripe's docs.", {"type": "object"}, server="stripe_docs")
    shell = ToolSpec("shell", "Run a command.", {"type": "object"}, server="shell")
    tool = "mcp__stripe_docs__search_stripe_documentation"
    turns = [  # Claude Code defers MCP tools: the model loads the schema with ToolSearch, then calls it
        ScriptedTurn(text="Load the docs tool.", tool_calls=[ScriptedCall("ToolSearch", {"query": f"select:{tool}"})]),
        ScriptedTurn(text="Look it up.", tool_calls=[ScriptedCall(tool, {"query": "checkout session", "limit": 2})]),
        ScriptedTurn(text="Found it.")]
    with FakeModelServer(turns, api_key=REAL_KEY) as fake:
        agent = create_agent("claude-code", base_url=fake.url, api_key=REAL_KEY, model="claude-sonnet-4-5")
        bus = EventBus()
        events: list = []
        bus.subscribe(events.append)
        driver = Driver(agent=agent, executor=NoTools(), task=Task(env_id="x", problem="Find the docs.", tools=[docs, shell],
                                                                   workspace=str(workspace)),
                        bus=bus, limits=Limits(max_turns=5, wall_time=180))
        end = await driver.run()
        await bus.drain()
        listed = json.dumps(fake.requests[0].body)
    assert end.reason == "agent_done", end.error
    assert tool in listed and "mcp__shell" not in listed  # offered our docs server; Claude Code has its own shell
    init = next(e.text for e in events if e.type == "service" and '"subtype":"init"' in e.text)
    assert '{"name":"stripe_docs","status":"connected"' in init
    results = [e for e in events if e.type == "tool_result"]
    assert [r.tool for r in results] == ["ToolSearch", tool]
    assert not results[1].is_error and "checkout" in results[1].output.lower(), results[1].output
