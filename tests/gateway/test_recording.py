"""The gateway's model recording, and a recorded upstream serving it again: same bytes, divergence, live or the end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from stripebench_tui.core.redact import Redactor
from stripebench_tui.gateway.app import Gateway, Upstream
from stripebench_tui.gateway.recorded import ENDED, RecordedUpstream
from stripebench_tui.gateway.recording import EXCHANGES, ModelRecorder, digest, load_recording
from stripebench_tui.gateway.remap import mapper, remap_body, remap_stream
from stripebench_tui.gateway.sse import SseDecoder
from stripebench_tui.gateway.wire import ANTHROPIC, OPENAI_CHAT, Wire
from stripebench_tui.testing.fake_models import FakeModelServer, Fault
from stripebench_tui.testing.fake_stream import anthropic_events, openai_chat_events
from stripebench_tui.testing.fake_wire import ScriptedCall, ScriptedTurn, anthropic_reply, openai_reply
from tests.gateway.conftest import REAL_KEY

SECRET = "emulator-control-token-4242"  # an episode secret the recording must not hold


def script(last: str = "All done.") -> list[ScriptedTurn]:
    return [ScriptedTurn(text="Look first.", tool_calls=[ScriptedCall("shell", {"command": "ls /srv/old/workspace"})]),
            ScriptedTurn(text="Now edit.", tool_calls=[ScriptedCall("edit", {"path": "/srv/old/workspace/app.py"})]),
            ScriptedTurn(text=last)]


class Client:
    """A harness stand-in speaking raw HTTP: keeps the history, answers each call with ``results[name]``."""

    def __init__(self, gateway: Gateway, protocol: str = "anthropic", stream: bool = True) -> None:
        self.gateway, self.protocol, self.stream = gateway, protocol, stream
        self.wire: Wire = ANTHROPIC if protocol == "anthropic" else OPENAI_CHAT
        self.messages: list[dict[str, Any]] = [{"role": "user", "content": "Fix the shop."}]
        self.received: list[bytes] = []

    def send(self, results: dict[str, str] | None = None, path: str | None = None) -> httpx.Response:
        headers = {"x-api-key": self.gateway.dummy_key, "anthropic-version": "2023-06-01"} if self.protocol == "anthropic" \
            else {"authorization": f"Bearer {self.gateway.dummy_key}"}
        body = {"model": "claude-sonnet-4-5" if self.protocol == "anthropic" else "gpt-4o", "max_tokens": 256,
                "messages": self.messages, "stream": self.stream}
        url = self.gateway.url + (path or ("/v1/messages" if self.protocol == "anthropic" else "/v1/chat/completions"))
        response = httpx.post(url, json=body, headers=headers, timeout=30)
        self.received.append(response.content)
        if response.status_code == 200:
            self._remember(response.content, results or {})
        return response

    def _remember(self, raw: bytes, results: dict[str, str]) -> None:
        if self.stream:
            parser = self.wire.stream()
            for event, data in SseDecoder().feed(raw):
                parser.feed(event, data)
            reply = parser.end()
        else:
            reply = self.wire.reply(json.loads(raw))
        if self.protocol == "anthropic":
            content = ([{"type": "text", "text": reply.text}] if reply.text else []) + [
                {"type": "tool_use", "id": c.call_id, "name": c.name, "input": c.arguments} for c in reply.calls]
            self.messages.append({"role": "assistant", "content": content})
            if reply.calls:
                self.messages.append({"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": c.call_id, "content": results.get(c.name, f"ran {c.name}")}
                    for c in reply.calls]})
        else:
            self.messages.append({"role": "assistant", "content": reply.text, "tool_calls": [
                {"id": c.call_id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                for c in reply.calls]})
            self.messages += [{"role": "tool", "tool_call_id": c.call_id, "content": results.get(c.name, f"ran {c.name}")}
                              for c in reply.calls]


def record(tmp_path: Path, protocol: str = "anthropic", stream: bool = True, turns: list[ScriptedTurn] | None = None,
           faults: list[Fault] | None = None) -> tuple[Path, Client]:
    """A three-turn conversation through a recording gateway; the recording's directory and the client."""
    directory = tmp_path / "recorded" / "model"
    with FakeModelServer(turns or script(), faults, api_key=REAL_KEY) as fake:
        recorder = ModelRecorder(directory, Redactor([REAL_KEY, SECRET]))
        with Gateway(Upstream(fake.url, REAL_KEY, fake.openai_base_url, REAL_KEY), recorder=recorder) as gateway:
            client = Client(gateway, protocol, stream)
            while client.send().status_code != 200 or client.messages[-1]["role"] != "assistant":
                pass
    return directory, client


@pytest.mark.parametrize("protocol,stream", [("anthropic", True), ("anthropic", False), ("openai", True), ("openai", False)])
def test_each_response_is_recorded_as_the_harness_received_it(tmp_path: Path, protocol: str, stream: bool) -> None:
    directory, client = record(tmp_path, protocol, stream)
    lines = [json.loads(line) for line in (directory / EXCHANGES).read_text().splitlines()]
    assert [(x["protocol"], x["status"], x["stream"], x["turn"]) for x in lines] == \
        [(client.wire.name, 200, stream, n) for n in (1, 2, 3)]
    assert [(directory / x["body"]).read_bytes() for x in lines] == client.received
    assert all(x["body"].endswith(".sse" if stream else ".json") for x in lines)
    # the second request newly carried the result of turn 1's call, kept as a digest (and a short excerpt)
    assert lines[0]["carries"] == [] and [c["tool"] for c in lines[1]["carries"]] == ["shell"]
    assert lines[1]["carries"][0]["sha256"] == digest("ran shell") and lines[1]["carries"][0]["excerpt"] == "ran shell"


def test_the_recording_is_redacted_and_never_holds_the_provider_key(tmp_path: Path) -> None:
    turns = [ScriptedTurn(text=f"The token is {SECRET} and the key {REAL_KEY}.")]
    directory, client = record(tmp_path, turns=turns, faults=[Fault(status=429, retry_after=0.01, message=f"slow {REAL_KEY}")])
    assert SECRET in _reply(client.received[-1]).text  # the harness got it; the recording does not keep it
    everything = b"".join(p.read_bytes() for p in directory.iterdir())
    assert SECRET.encode() not in everything and REAL_KEY.encode() not in everything
    assert _reply((directory / "0002.sse").read_bytes()).text == "The token is [REDACTED] and the key [REDACTED]."
    lines = [json.loads(line) for line in (directory / EXCHANGES).read_text().splitlines()]
    assert [(x["status"], x["turn"], x["retry_after"]) for x in lines] == [(429, None, "0.01"), (200, 1, "")]


def _reply(raw: bytes, wire: Wire = ANTHROPIC) -> Any:
    parser = wire.stream()
    for event, data in SseDecoder().feed(raw):
        parser.feed(event, data)
    return parser.end()


def _replaying(recording_dir: Path, upstream: Upstream, turns: int | None, live: bool, tmp_path: Path,
               seen: dict[str, Any]) -> tuple[Gateway, ModelRecorder]:
    replay = RecordedUpstream(load_recording(recording_dir), turns, live=live,
                              on_divergence=lambda turn, text, details: seen.setdefault("divergence", (turn, text, details)),
                              on_end=lambda: seen.__setitem__("ended", True),
                              on_replayed=lambda n: seen.__setitem__("replayed", n))
    recorder = ModelRecorder(tmp_path / "fork" / "model", Redactor([REAL_KEY]))
    recorder.replay, replay.recorder = replay, recorder
    return Gateway(upstream, recorder=recorder), recorder


def test_a_recorded_upstream_serves_turns_1_to_n_with_the_same_bytes_then_the_live_one(tmp_path: Path) -> None:
    directory, first = record(tmp_path)
    seen: dict[str, Any] = {}
    with FakeModelServer([ScriptedTurn(text="Done, live.")], api_key=REAL_KEY) as live:  # the rest, scripted otherwise
        gateway, _ = _replaying(directory, Upstream(live.url, REAL_KEY, live.openai_base_url, REAL_KEY), 2, True, tmp_path, seen)
        with gateway:
            client = Client(gateway)
            client.send(), client.send()
            assert client.received == first.received[:2]
            assert live.requests == [] and "replayed" not in seen
            client.send()
            assert [r.protocol for r in live.requests] == ["anthropic"]
    assert seen["replayed"] == 2
    assert _reply(client.received[2]).text == "Done, live."
    # the live reply differs from the recorded turn 3: that is the fork's first divergence
    turn, text, details = seen["divergence"]
    assert (turn, details["differs"]) == (3, ["text"]) and "live model's reply differs" in text
    again = [json.loads(line) for line in (tmp_path / "fork" / "model" / EXCHANGES).read_text().splitlines()]
    assert [x["source"] for x in again] == ["recording", "recording", "upstream"]


def test_offline_the_whole_recording_is_served_then_it_ends(tmp_path: Path) -> None:
    directory, first = record(tmp_path)
    seen: dict[str, Any] = {}
    gateway, _ = _replaying(directory, Upstream("http://127.0.0.1:9", None, "http://127.0.0.1:9/v1", None), None, False,
                            tmp_path, seen)
    with gateway:
        client = Client(gateway)
        for _ in range(3):
            client.send()
        counted = httpx.post(gateway.url + "/v1/messages/count_tokens", json={"messages": client.messages},
                             headers={"x-api-key": gateway.dummy_key}, timeout=10)
        assert counted.status_code == 200 and counted.json()["input_tokens"] > 10
        assert client.received == first.received
        assert "divergence" not in seen
        beyond = client.send()
    assert beyond.status_code == 503 and ENDED in beyond.text
    assert seen["ended"] is True and seen["replayed"] == 3
    assert "asks for more than the recording holds" in seen["divergence"][1]


def test_a_request_carrying_another_result_is_the_first_divergence(tmp_path: Path) -> None:
    directory, first = record(tmp_path)
    seen: dict[str, Any] = {}
    gateway, _ = _replaying(directory, Upstream("http://127.0.0.1:9", None, "http://127.0.0.1:9/v1", None), None, False,
                            tmp_path, seen)
    with gateway:
        client = Client(gateway)
        client.send({"shell": "something else"})
        client.send({"edit": "also different"})
        client.send()
    assert client.received == first.received  # the recorded turns are served all the same
    turn, text, details = seen["divergence"]
    assert turn == 1 and text == "turn 1: shell result differs from the recording (output)"
    assert details["recorded_output"] == "ran shell" and details["new_output"] == "something else"


def test_a_request_the_recording_cannot_answer_goes_live(tmp_path: Path) -> None:
    directory, _ = record(tmp_path)  # recorded streaming
    seen: dict[str, Any] = {}
    with FakeModelServer(script(), api_key=REAL_KEY) as live:
        gateway, _ = _replaying(directory, Upstream(live.url, REAL_KEY, live.openai_base_url, REAL_KEY), 3, True, tmp_path, seen)
        with gateway:
            client = Client(gateway, stream=False)
            assert client.send().status_code == 200
            assert len(live.requests) == 1
    turn, text, details = seen["divergence"]
    assert turn == 1 and details["differs"] == ["request"]
    assert "the harness asks /v1/messages; the recording has /v1/messages (streaming)" in text


def test_a_fork_past_the_recording_is_refused(tmp_path: Path) -> None:
    directory, _ = record(tmp_path)
    with pytest.raises(ValueError, match="the recording has 3 turns; cannot serve turn 4"):
        RecordedUpstream(load_recording(directory), 4)


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
def test_recorded_paths_are_mapped_even_when_split_across_stream_events(protocol: str) -> None:
    turn = ScriptedTurn(text="Editing /srv/old/workspace/app.py now.",
                        tool_calls=[ScriptedCall("edit", {"path": "/srv/old/workspace/app.py", "text": "x = 1"})])
    if protocol == "anthropic":
        wire, events = ANTHROPIC, list(anthropic_events(anthropic_reply({"model": "m"}, turn, 1)))
    else:
        wire, events = OPENAI_CHAT, list(openai_chat_events(openai_reply({"model": "m"}, turn, 1), False))
    assert not any(b"/srv/old/workspace" in e for e in events)  # the path really is split across events
    mapped = remap_stream(events, mapper([("/srv/old/workspace", "/srv/new/ws")]))
    reply = _reply(b"".join(mapped), wire)
    assert reply.complete and reply.text == "Editing /srv/new/ws/app.py now."
    assert [(c.name, c.arguments) for c in reply.calls] == [("edit", {"path": "/srv/new/ws/app.py", "text": "x = 1"})]
    assert mapped[-1] == events[-1] and len(mapped) == len(events)  # nothing to map: the recorded bytes as they were
    body = json.dumps(anthropic_reply({"model": "m"}, turn, 1)).encode()
    assert b"/srv/new/ws/app.py" in remap_body(body, mapper([("/srv/old/workspace", "/srv/new/ws")]))
    assert remap_body(body, mapper([("/nowhere", "/x")])) is body
