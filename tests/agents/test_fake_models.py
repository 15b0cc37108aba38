"""The fake model server: strict like the real services, scriptable from a file, runnable by hand."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import httpx
import pytest

from stripebench_tui.testing.fake_models import Fault
from stripebench_tui.testing.fake_wire import ScriptedTurn, check_anthropic, check_openai, turns_from_plan


def anthropic_body(messages):
    return {"model": "m", "max_tokens": 10, "messages": messages}


TOOL_USE = {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "shell", "input": {}}]}


def test_anthropic_check_wants_tool_results_first_and_complete():
    start = {"role": "user", "content": "go"}
    assert check_anthropic(anthropic_body([start])) is None
    missing = {"role": "user", "content": [{"type": "text", "text": "what next"}]}
    assert "without tool_result" in check_anthropic(anthropic_body([start, TOOL_USE, missing]))
    late = {"role": "user", "content": [{"type": "text", "text": "x"},
                                        {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}
    assert check_anthropic(anthropic_body([start, TOOL_USE, late])) is not None
    good = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}
    assert check_anthropic(anthropic_body([start, TOOL_USE, good])) is None
    # Consecutive turns of one role are combined, as the Messages API does; a conversation still starts with the user.
    assert check_anthropic(anthropic_body([start, start])) is None
    assert check_anthropic(anthropic_body([start, TOOL_USE, {"role": "user", "content": [good["content"][0]]}, start])) is None
    assert "without tool_result" in check_anthropic(anthropic_body([start, TOOL_USE, start, good]))
    assert "starting with user" in check_anthropic(anthropic_body([TOOL_USE, start]))
    system = {"role": "system", "content": [{"type": "text", "text": "reminder"}]}
    assert check_anthropic(anthropic_body([start, system])) is None
    bad_tool = {**anthropic_body([start]), "tools": [{"name": "a.b", "input_schema": {"type": "object"}}]}
    assert "invalid tool" in check_anthropic(bad_tool)


def test_openai_check_wants_a_tool_message_per_call_and_json_arguments():
    call = {"id": "c1", "type": "function", "function": {"name": "shell", "arguments": "{}"}}
    assistant = {"role": "assistant", "content": None, "tool_calls": [call]}
    user = {"role": "user", "content": "go"}
    assert "must be followed by tool messages" in check_openai({"model": "m", "messages": [user, assistant, user]})
    answered = [user, assistant, {"role": "tool", "tool_call_id": "c1", "content": "ok"}]
    assert check_openai({"model": "m", "messages": answered}) is None
    stray = [user, {"role": "tool", "tool_call_id": "nope", "content": "ok"}]
    assert "unknown tool_call_id" in check_openai({"model": "m", "messages": stray})
    broken = {**assistant, "tool_calls": [{**call, "function": {"name": "shell", "arguments": "{"}}]}
    assert "not valid JSON" in check_openai({"model": "m", "messages": [user, broken, answered[2]]})


def test_http_answers_faults_script_and_exhaustion(fake_server):
    fake = fake_server(turns_from_plan([("shell", {"command": "ls"})]), faults=[Fault(status=503, after=1)])
    with httpx.Client(base_url=fake.url) as client:
        first = client.post("/v1/messages", json=anthropic_body([{"role": "user", "content": "go"}]))
        assert first.status_code == 200
        assert first.json()["stop_reason"] == "tool_use" and first.json()["content"][1]["input"] == {"command": "ls"}
        # the fault waits for one good reply, then fires once
        assert client.post("/v1/chat/completions",
                           json={"model": "m", "messages": [{"role": "user", "content": "go"}]}).status_code == 503
        done = client.post("/v1/chat/completions", json={"model": "m", "messages": [{"role": "user", "content": "go"}]})
        assert done.json()["choices"][0]["finish_reason"] == "stop"
        over = client.post("/v1/chat/completions", json={"model": "m", "messages": [{"role": "user", "content": "go"}]})
        assert over.status_code == 400 and "exhausted" in over.json()["error"]["message"]
        invalid = client.post("/v1/messages", json={"model": "m"})
        assert invalid.status_code == 400 and invalid.json()["type"] == "error"
    assert [r.status for r in fake.requests] == [200, 503, 200, 400, 400]


def test_command_line_serves_a_script_file(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"text": "Hello from the script."}], "api_key": "sk-x"}))
    proc = subprocess.Popen(
        [sys.executable, "-m", "stripebench_tui.testing.fake_models", "--script", str(script)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        url = line.split(" on ")[1].split()[0]
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        assert httpx.post(f"{url}/v1/chat/completions", json=body, headers={"Authorization": "Bearer bad"}).status_code == 401
        reply = httpx.post(f"{url}/v1/chat/completions", json=body, headers={"Authorization": "Bearer sk-x"})
        assert reply.json()["choices"][0]["message"]["content"] == "Hello from the script."
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        proc.stdout.close()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("when", ["at once", "after serving"])
def test_command_line_stops_quietly_on_a_signal(tmp_path, sig, when):
    """Ctrl+C or a kill ends it with exit 0 and nothing on stderr, also when the signal comes before uvicorn is up."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"text": "hi"}]}))
    proc = subprocess.Popen([sys.executable, "-m", "stripebench_tui.testing.fake_models", "--script", str(script)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if when == "after serving":
        assert httpx.get(line.split(" on ")[1].split()[0] + "/health", timeout=10).status_code < 500
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert (proc.returncode, err) == (0, "")


def test_command_line_rejects_a_bad_script(tmp_path):
    script = tmp_path / "script.json"
    script.write_text("{not json")
    result = subprocess.run(
        [sys.executable, "-m", "stripebench_tui.testing.fake_models", "--script", str(script)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 3 and "cannot read script" in result.stderr


def test_scripted_turn_from_json():
    turn = ScriptedTurn.from_dict({"text": "t", "tool_calls": [{"name": "shell", "raw_arguments": "{"}], "usage": [5, 6]})
    assert turn.tool_calls[0].raw_arguments == "{" and turn.usage == (5, 6)
    with pytest.raises(KeyError):
        ScriptedTurn.from_dict({"tool_calls": [{"arguments": {}}]})
