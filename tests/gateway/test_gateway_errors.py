"""Raw HTTP through the gateway: query strings, count_tokens, keys, and upstream errors passed through without losing events."""

from __future__ import annotations

import json

import httpx
import pytest

from stripebench_tui.gateway.app import Upstream
from stripebench_tui.testing.fake_models import Fault
from stripebench_tui.testing.fake_wire import ScriptedTurn
from tests.gateway.conftest import REAL_KEY, Rig

BODY = {"model": "claude-sonnet-5-5", "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]}


def _post(rig: Rig, path: str, body: dict, key: str | None = None, **kw) -> httpx.Response:
    key = rig.gateway.dummy_key if key is None else key
    return httpx.post(rig.gateway.url + path, json=body, headers={"x-api-key": key, "anthropic-version": "2023-06-01"},
                      timeout=10, **kw)


def test_query_strings_and_count_tokens_reach_the_upstream(rig) -> None:
    r = rig([ScriptedTurn(text="hello")])
    counted = _post(r, "/v1/messages/count_tokens?beta=true", {"model": "m", "messages": BODY["messages"]})
    assert counted.status_code == 200 and counted.json()["input_tokens"] > 0
    answer = _post(r, "/v1/messages?beta=true", BODY)
    assert answer.status_code == 200 and answer.json()["content"][0]["text"] == "hello"
    assert [(q.path, q.query, q.api_key) for q in r.fake.requests] == [
        ("/v1/messages/count_tokens", "beta=true", REAL_KEY), ("/v1/messages", "beta=true", REAL_KEY)]
    # count_tokens is not a turn
    assert [m.text for m in r.seen.of("model_message") if m.role == "assistant"] == ["hello"]


def test_a_wrong_key_is_refused_in_the_providers_format_and_never_forwarded(rig) -> None:
    r = rig([ScriptedTurn(text="hello")])
    refused = _post(r, "/v1/messages", BODY, key=REAL_KEY)
    assert refused.status_code == 401 and refused.json()["error"]["type"] == "authentication_error"
    bearer = httpx.post(r.gateway.openai_base_url + "/chat/completions", json={"model": "m", "messages": []},
                        headers={"authorization": "Bearer nope"}, timeout=10)
    assert bearer.status_code == 401 and "wrong API key" in bearer.json()["error"]["message"]
    assert r.fake.requests == []


def test_429_with_retry_after_and_500_pass_through_and_earlier_events_stay(rig) -> None:
    faults = [Fault(status=429, count=1, retry_after=7, after=1), Fault(status=500, count=1, after=1)]
    r = rig([ScriptedTurn(text="first"), ScriptedTurn(text="second")], faults)
    assert _post(r, "/v1/messages", BODY).status_code == 200
    limited = _post(r, "/v1/messages", BODY)
    assert limited.status_code == 429 and limited.headers["retry-after"] == "7"
    assert limited.json()["error"]["type"] == "rate_limit_error"
    failed = _post(r, "/v1/messages", BODY)
    assert failed.status_code == 500 and failed.json()["error"]["message"] == "injected fault"
    assert _post(r, "/v1/messages", BODY).json()["content"][0]["text"] == "second"
    assert [m.text for m in r.seen.of("model_message") if m.role == "assistant"] == ["first", "second"]
    lines = [s.text for s in r.seen.of("service")]
    assert lines == [f"anthropic request 2 from {r.fake.url}: upstream answered HTTP 429: injected fault (retry-after 7)",
                     f"anthropic request 3 from {r.fake.url}: upstream answered HTTP 500: injected fault"]


def test_an_upstream_401_is_one_line_naming_the_upstream_and_never_the_key(rig) -> None:
    r = rig([ScriptedTurn(text="never")], upstream=None)
    r.gateway.upstream.anthropic_key = "sk-wrong-key-for-the-upstream"
    answer = _post(r, "/v1/messages", BODY)
    assert answer.status_code == 401  # the harness sees the provider's answer
    (line,) = [s.text for s in r.seen.of("service")]
    assert line == (f"anthropic request 1 from {r.fake.url}: upstream answered HTTP 401: invalid api key; "
                    "check the provider key given to the gateway (ANTHROPIC_API_KEY / OPENAI_API_KEY)")
    assert "sk-wrong" not in line


@pytest.mark.parametrize("path,body", [
    ("/v1/messages", {**BODY, "stream": True}),
    ("/v1/chat/completions", {"model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": "hi"}]}),
])
def test_a_stream_cut_off_upstream_is_cut_off_for_the_harness_and_what_came_is_kept(rig, path: str, body: dict) -> None:
    text = "A fairly long answer that will be cut off in the middle of its stream."
    r = rig([ScriptedTurn(text=text)], [Fault(cut_after=3)])
    received = b""
    with pytest.raises(httpx.RemoteProtocolError):
        with httpx.stream("POST", r.gateway.url + path, json=body, timeout=10,
                          headers={"x-api-key": r.gateway.dummy_key, "authorization": f"Bearer {r.gateway.dummy_key}"}) as resp:
            assert resp.status_code == 200
            for chunk in resp.iter_raw():
                received += chunk
    assert received.count(b"data:") == 3  # every event the upstream sent reached the harness
    partial = [m for m in r.seen.of("model_message") if m.role == "assistant"]
    assert len(partial) == 1 and partial[0].text and text.startswith(partial[0].text) and partial[0].text != text
    assert r.seen.of("service")[0].text.endswith("upstream stream cut off: RemoteProtocolError")


def test_an_unreachable_upstream_is_one_line_naming_it_without_the_key(rig) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    r = rig([], upstream=Upstream(f"http://127.0.0.1:{dead}", REAL_KEY, f"http://127.0.0.1:{dead}/v1", REAL_KEY))
    answer = _post(r, "/v1/messages", BODY)
    assert answer.status_code == 502
    message = answer.json()["error"]["message"]
    assert message == f"stripebench gateway: upstream http://127.0.0.1:{dead} unreachable (ConnectError)"
    assert REAL_KEY not in json.dumps(answer.json())
    assert r.seen.of("service")[0].text.endswith(message)


def test_upstream_from_env_and_v1_bases_are_not_doubled() -> None:
    up = Upstream.from_env(environ={"ANTHROPIC_BASE_URL": "http://a:1", "ANTHROPIC_API_KEY": "ka",
                                    "OPENAI_BASE_URL": "http://o:2/v1", "OPENAI_API_KEY": "ko"})
    assert up.target("anthropic", "/v1/messages", "beta=true") == ("http://a:1/v1/messages?beta=true", "ka")
    assert up.target("openai", "/v1/chat/completions", "") == ("http://o:2/v1/chat/completions", "ko")
    assert Upstream.from_env("http://vllm:8000/v1", environ={}).target("openai", "/v1/responses", "")[0] == "http://vllm:8000/v1/responses"


async def test_a_harness_that_hangs_up_on_the_last_event_still_gets_its_turn_recorded() -> None:
    """The server closes the relay at the yield that passed the final event (the harness hung up): the reply is whole."""
    from stripebench_tui.gateway.app import Gateway
    from stripebench_tui.gateway.wire import ANTHROPIC
    from stripebench_tui.testing.fake_stream import anthropic_events
    from stripebench_tui.testing.fake_wire import anthropic_reply

    body = {"model": "m", "max_tokens": 10, "stream": True, "messages": [{"role": "user", "content": "go"}]}
    events = list(anthropic_events(anthropic_reply(body, ScriptedTurn(text="All done."), 1)))
    gateway = Gateway(Upstream("http://upstream.invalid", REAL_KEY))
    exchange = gateway.traffic.arrived(ANTHROPIC, body, "/v1/messages")
    class Events(httpx.AsyncByteStream):  # the upstream sends one event per chunk
        async def __aiter__(self):
            for event in events:
                yield event

    upstream = httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=Events())
    relay = gateway._relay(exchange, upstream, 0.0)  # our own generator, driven as the ASGI server does
    passed = b""
    while b"message_stop" not in passed:
        passed += await relay.__anext__()
    await relay.aclose()  # what the server does when the harness is gone
    assert exchange.reply is not None and exchange.reply.complete and exchange.reply.text == "All done."
    assert exchange.error == ""
