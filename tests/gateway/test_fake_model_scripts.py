"""The fake model's script format for driving real harnesses: {workspace} in arguments, three protocols, a request log."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from stripebench_tui.testing.fake_models import FakeModelServer, read_script


def test_a_script_file_fills_the_workspace_and_the_log_records_each_request(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"variables": {"workspace": "/ws"}, "turns": [
        {"text": "Write it.", "tool_calls": [{"name": "Write",
                                              "arguments": {"file_path": "{workspace}/a.txt", "content": "{x}"}}]},
        {"text": "Done."}, {"text": "Again."}]}))
    turns, faults, key, variables = read_script(script)
    log = tmp_path / "requests.jsonl"
    with FakeModelServer(turns, faults, key, variables=variables, log_path=log) as fake:
        first = httpx.post(fake.url + "/v1/messages?beta=true", json={"model": "m", "max_tokens": 9, "messages": [
            {"role": "user", "content": "go"}]}).json()
        second = httpx.post(fake.openai_base_url + "/responses", json={"model": "m", "input": "go"}).json()
        streamed = httpx.post(fake.openai_base_url + "/chat/completions",
                              json={"model": "m", "stream": True, "messages": [{"role": "user", "content": "go"}]})
    assert first["content"][1]["input"] == {"file_path": "/ws/a.txt", "content": "{x}"}  # unknown names stay as written
    assert second["output"][0]["content"][0]["text"] == "Done."
    assert streamed.headers["content-type"].startswith("text/event-stream") and streamed.text.endswith("data: [DONE]\n\n")
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(x["protocol"], x["path"], x["query"], x["status"]) for x in lines] == [
        ("anthropic", "/v1/messages", "beta=true", 200), ("responses", "/v1/responses", "", 200),
        ("openai", "/v1/chat/completions", "", 200)]
    assert lines[0]["body"]["messages"] == [{"role": "user", "content": "go"}]
