"""Responses API tool calls beyond plain functions, as Codex uses them: namespaced tools (its MCP servers) and custom
(free-form) tools; through the gateway over raw HTTP, streamed and not, calls and results both become events."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from stripebench_tui.gateway.sse import SseDecoder
from stripebench_tui.testing.fake_wire import ScriptedCall, ScriptedTurn

TOOLS = [
    {"type": "function", "name": "exec_command", "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}},
    {"type": "namespace", "name": "mcp__docs", "description": "", "tools": [
        {"type": "function", "name": "search", "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}]},
    {"type": "custom", "name": "apply_patch", "description": "Edit files with a patch."},
]
PATCH = "*** Begin Patch\n*** Add File: a.txt\n+hello\n*** End Patch"


def _output(response: httpx.Response, stream: bool) -> list[dict[str, Any]]:
    if not stream:
        return response.json()["output"]
    decoder = SseDecoder()
    events = [json.loads(data) for _, data in decoder.feed(response.content)]
    return next(e["response"]["output"] for e in events if e["type"] == "response.completed")


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_namespaced_and_custom_tool_calls_and_their_outputs_become_events(rig, stream: bool) -> None:
    r = rig([ScriptedTurn(text="Search, then patch.", tool_calls=[ScriptedCall("mcp__docs__search", {"query": "refunds"}),
                                                                  ScriptedCall("apply_patch", {"input": PATCH})]),
             ScriptedTurn(text="Done.")])
    headers = {"authorization": f"Bearer {r.gateway.dummy_key}"}
    items: list[dict[str, Any]] = [{"type": "message", "role": "user", "content": "Look up refunds."}]
    with httpx.Client(base_url=r.gateway.openai_base_url, headers=headers, timeout=30) as client:
        first = client.post("/responses", json={"model": "gpt-test", "input": items, "tools": TOOLS, "stream": stream})
        assert first.status_code == 200, first.text
        output = _output(first, stream)
        search, patch = [o for o in output if o["type"] != "message"]
        # the fake answers in the shapes the tools were offered in
        assert (search["type"], search["namespace"], search["name"]) == ("function_call", "mcp__docs", "search")
        assert (patch["type"], patch["name"], patch["input"]) == ("custom_tool_call", "apply_patch", PATCH)
        items += output + [{"type": "function_call_output", "call_id": search["call_id"], "output": "3 results"},
                           {"type": "custom_tool_call_output", "call_id": patch["call_id"], "output": "Success. Added a.txt"}]
        second = client.post("/responses", json={"model": "gpt-test", "input": items, "tools": TOOLS, "stream": stream})
        assert second.status_code == 200, second.text

    calls = r.seen.of("tool_call")
    assert [(c.tool, c.arguments) for c in calls] == [("mcp__docs__search", {"query": "refunds"}),
                                                      ("apply_patch", {"input": PATCH})]
    assert [c.call_id for c in calls] == [search["call_id"], patch["call_id"]]
    results = r.seen.of("tool_result")
    assert [(x.call_id, x.tool, x.output) for x in results] == [(search["call_id"], "mcp__docs__search", "3 results"),
                                                                (patch["call_id"], "apply_patch", "Success. Added a.txt")]
    assert r.seen.turns("tool_result") == [1, 1]
