"""A local fake model server speaking Anthropic's and OpenAI's wire protocols from a script.

Tests point the real SDKs (and real agent harnesses) at it: ``POST /v1/messages``
(Anthropic, also ``/v1/messages/count_tokens``), ``POST /v1/chat/completions`` and
``POST /v1/responses`` (OpenAI) answer with the next scripted turn, streamed as
server-sent events when the request asks for ``stream`` (``fake_stream``). Every
request is recorded, and faults (429 with retry-after, 5xx, hangs, a stream cut
off after some events) can be put in front of the script. String arguments of
scripted tool calls may name ``{workspace}`` (or any key of ``variables``), filled
in when the turn is served. Run it by hand with::

    python -m stripebench_tui.testing.fake_models --script script.json

where script.json is ``{"turns": [{"text": "…", "tool_calls": [{"name": "shell",
"arguments": {"command": "ls"}}]}, {"text": "Done."}], "faults": [{"status": 429,
"count": 2, "retry_after": 0.1}], "api_key": "optional"}``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from stripebench_tui.background_server import BackgroundServer
from stripebench_tui.core.json_value import JSONValue
from stripebench_tui.testing.fake_stream import (
    anthropic_events,
    carries_token,
    check_responses,
    openai_chat_events,
    responses_error,
    responses_events,
    responses_reply,
    stream_error,
    tool_index_as,
)
from stripebench_tui.testing.fake_wire import (
    ScriptedCall,
    ScriptedTurn,
    anthropic_error,
    anthropic_reply,
    check_anthropic,
    check_openai,
    openai_error,
    openai_reply,
)


@dataclass
class Fault:
    """Answer ``count`` requests (-1: all) with ``status``, or hang for ``hang`` seconds, after ``after`` good replies."""

    status: int = 500
    count: int = 1
    retry_after: float | None = None
    hang: float | None = None
    after: int = 0
    message: str = "injected fault"
    cut_after: int | None = None  # stream this many events of the next reply, then cut it as ``cut_as`` says:
    cut_as: str = "drop"  # "drop" the connection, "end" the response as if it were complete, or send an "error" event


class Gate:
    """A point a streamed reply waits at: ``reached`` is set when it gets there, ``open()`` lets it go on."""

    def __init__(self) -> None:
        self.reached = threading.Event()
        self._open = threading.Event()

    def open(self) -> None:
        self._open.set()

    def is_open(self) -> bool:
        return self._open.is_set()


@dataclass
class StreamHold:
    """Holds a streamed reply at ``before`` (its first token is not sent yet) and ``after`` (it was sent)."""

    before: Gate = field(default_factory=Gate)
    after: Gate = field(default_factory=Gate)


@dataclass
class RecordedRequest:
    """One request the fake received, and what it answered."""

    protocol: str  # "anthropic" | "openai" | "responses" | "count_tokens"
    body: dict[str, Any]
    api_key: str
    status: int = 0
    reply: dict[str, Any] = field(default_factory=dict)
    path: str = ""
    query: str = ""
    streamed: bool = False


@dataclass(frozen=True)
class _Wire:
    protocol: str
    check: Callable[[dict[str, Any]], str | None]
    reply: Callable[[dict[str, Any], ScriptedTurn, int], dict[str, Any]]
    error: Callable[[int, str], dict[str, Any]]
    stream: Callable[[dict[str, Any], dict[str, Any]], Iterator[bytes]]


_ANTHROPIC = _Wire("anthropic", check_anthropic, anthropic_reply, anthropic_error, lambda _body, r: anthropic_events(r))
_OPENAI = _Wire("openai", check_openai, openai_reply, openai_error,
                lambda body, r: openai_chat_events(r, bool((body.get("stream_options") or {}).get("include_usage"))))
_RESPONSES = _Wire("responses", check_responses, responses_reply, responses_error, lambda _body, r: responses_events(r))


def _fill(value: JSONValue, variables: dict[str, str]) -> Any:
    """``{name}`` in every string of ``value`` replaced by ``variables[name]``."""
    if isinstance(value, str):
        for name, text in variables.items():
            value = value.replace("{" + name + "}", text)
        return value
    if isinstance(value, dict):
        return {k: _fill(v, variables) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, variables) for v in value]
    return value


def _given_key(request: Request) -> str:
    auth = request.headers.get("authorization", "")
    return request.headers.get("x-api-key") or auth.removeprefix("Bearer ").strip()


class FakeModelServer:
    """The fake server; ``with FakeModelServer(turns) as fake:`` runs it on a free port in a thread."""

    def __init__(
        self,
        turns: list[ScriptedTurn],
        faults: list[Fault] | None = None,
        api_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        variables: dict[str, str] | None = None,
        log_path: Path | None = None,
        chat_tool_index: str = "openai",
    ) -> None:
        self.turns = list(turns)
        self.chat_tool_index = chat_tool_index  # streamed Chat Completions tool calls' index: openai, missing, reused
        self.variables = dict(variables or {})
        self.log_path = log_path  # every request received, one JSON line each (protocol, path, query, body, status)
        self.faults = [Fault(**vars(f)) for f in faults or []]  # copies: counts are used up
        self.api_key = api_key
        self.host, self.port = host, port
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._answered = 0
        self._stopping = threading.Event()
        self._holds: list[StreamHold] = []
        self._served: BackgroundServer | None = None
        self.app = Starlette(
            routes=[
                Route("/v1/messages", self._handler(_ANTHROPIC), methods=["POST"]),
                Route("/v1/messages/count_tokens", self._count_tokens, methods=["POST"]),
                Route("/v1/chat/completions", self._handler(_OPENAI), methods=["POST"]),
                Route("/v1/responses", self._handler(_RESPONSES), methods=["POST"]),
                Route("/health", lambda _r: JSONResponse({"ok": True})),
            ]
        )

    @property
    def url(self) -> str:
        """Root URL; also the Anthropic SDK's base_url."""
        return f"http://{self.host}:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """Base URL for the OpenAI SDK (it appends /chat/completions)."""
        return f"{self.url}/v1"

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, failed ones included."""
        with self._lock:
            return list(self._requests)

    def answered(self) -> list[RecordedRequest]:
        """Requests that got a scripted reply (status 200)."""
        return [r for r in self.requests if r.status == 200]

    def hold_next_stream(self) -> StreamHold:
        """Hold the next streamed reply at its first token (see ``StreamHold``) until the test opens each gate."""
        hold = StreamHold()
        with self._lock:
            self._holds.append(hold)
        return hold

    async def _pass(self, gate: Gate) -> None:
        gate.reached.set()
        while not gate.is_open() and not self._stopping.is_set():
            await asyncio.sleep(0.01)

    def _next_fault(self) -> Fault | None:
        for fault in self.faults:
            if fault.count != 0 and self._answered >= fault.after:
                if fault.count > 0:
                    fault.count -= 1
                return fault
        return None

    async def _hang(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not self._stopping.is_set():
            await asyncio.sleep(0.02)

    def _handler(self, wire: _Wire) -> Callable[[Request], Any]:
        async def handle(request: Request) -> Response:
            try:
                body = await request.json()
            except ValueError:
                body = None
            record = RecordedRequest(wire.protocol, body if isinstance(body, dict) else {}, _given_key(request),
                                     path=request.url.path, query=request.url.query)
            with self._lock:
                self._requests.append(record)
                fault = self._next_fault()
            cut = fault if fault is not None and fault.cut_after is not None else None
            status, headers, payload = await self._answer(wire, record, body, None if cut is not None else fault)
            record.status, record.reply = status, payload
            self._log(record)
            if status == 200 and isinstance(body, dict) and (body.get("stream") or cut is not None):
                record.streamed = True
                with self._lock:
                    hold = self._holds.pop(0) if self._holds else None
                events = wire.stream(body, payload)
                if wire.protocol == "openai":
                    events = tool_index_as(events, self.chat_tool_index)
                return StreamingResponse(self._stream(wire, events, cut, hold), media_type="text/event-stream")
            return JSONResponse(payload, status_code=status, headers=headers)

        return handle

    def _log(self, record: RecordedRequest) -> None:
        if self.log_path is None:
            return
        line = {"protocol": record.protocol, "path": record.path, "query": record.query, "status": record.status,
                "body": record.body}
        with self._lock, open(self.log_path, "a") as out:
            out.write(json.dumps(line) + "\n")

    async def _stream(self, wire: _Wire, events: Iterator[bytes], cut: Fault | None, hold: StreamHold | None) -> Any:
        for i, chunk in enumerate(events):
            if cut is not None and cut.cut_after is not None and i >= cut.cut_after:
                if cut.cut_as == "error":
                    yield stream_error(wire.protocol, cut.message)
                elif cut.cut_as != "end":
                    raise ConnectionAbortedError("fake model: stream cut off by a fault")
                return
            if hold is not None and carries_token(chunk):
                await self._pass(hold.before)
                yield chunk
                await self._pass(hold.after)
                hold = None
                continue
            yield chunk

    async def _count_tokens(self, request: Request) -> Response:
        try:
            body = await request.json()
        except ValueError:
            body = {}
        record = RecordedRequest("count_tokens", body if isinstance(body, dict) else {}, _given_key(request),
                                 path=request.url.path, query=request.url.query)
        with self._lock:
            self._requests.append(record)
        if self.api_key is not None and record.api_key != self.api_key:
            record.status = 401
            return JSONResponse(anthropic_error(401, "invalid api key"), status_code=401)
        size = len(json.dumps(record.body.get("messages", []))) + len(json.dumps(record.body.get("system", "")))
        record.status, record.reply = 200, {"input_tokens": 10 + size // 4}
        self._log(record)
        return JSONResponse(record.reply)

    async def _answer(
        self, wire: _Wire, record: RecordedRequest, body: JSONValue, fault: Fault | None
    ) -> tuple[int, dict[str, str], dict[str, Any]]:
        if self.api_key is not None and record.api_key != self.api_key:
            return 401, {}, wire.error(401, "invalid api key")
        if fault is not None:
            if fault.hang is not None:
                await self._hang(fault.hang)
            headers = {} if fault.retry_after is None else {"retry-after": str(fault.retry_after)}
            return fault.status, headers, wire.error(fault.status, fault.message)
        if not isinstance(body, dict):
            return 400, {}, wire.error(400, "the body must be a JSON object")
        problem = wire.check(body)
        if problem:
            return 400, {}, wire.error(400, problem)
        with self._lock:
            if self._answered >= len(self.turns):
                return 400, {}, wire.error(400, f"fake model script exhausted after {len(self.turns)} turns")
            turn = self.turns[self._answered]
            if self.variables:
                turn = ScriptedTurn(turn.text, [ScriptedCall(c.name, _fill(c.arguments, self.variables), c.raw_arguments)
                                                for c in turn.tool_calls], turn.reasoning, turn.usage)
            self._answered += 1
            number = self._answered
        try:
            return 200, {}, wire.reply(body, turn, number)
        except ValueError as exc:
            return 400, {}, wire.error(400, str(exc))

    def start(self) -> FakeModelServer:
        """Serve in a background thread; returns once it accepts connections."""
        self._served = BackgroundServer(self.app, "the fake model server", host=self.host, port=self.port).start()
        self.port = self._served.port
        return self

    def stop(self) -> None:
        """Stop serving and wait for the thread."""
        self._stopping.set()
        if self._served is not None:
            self._served.stop()

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def serve_forever(self) -> None:
        """Serve in this thread until SIGINT or SIGTERM, then stop quietly (the command-line mode)."""
        served = BackgroundServer(self.app, "the fake model server", host=self.host, port=self.port)
        server = uvicorn.Server(served.config())

        def stop(signum: int, frame: object) -> None:
            server.should_exit = True

        # Ours from the start, so a signal before uvicorn takes over (or the one it re-raises when done) ends the
        # server without a KeyboardInterrupt traceback or a death by signal.
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, stop)
        sock = served.bind()
        self.port = served.port
        print(f"fake model server on {self.url} (OpenAI base URL {self.openai_base_url})", flush=True)
        server.run(sockets=[sock])


def load_script(path: Path) -> tuple[list[ScriptedTurn], list[Fault], str | None]:
    """Read a script file: a list of turns, or {"turns", "faults", "api_key"}."""
    turns, faults, api_key, _variables = read_script(path)
    return turns, faults, api_key


def read_script(path: Path) -> tuple[list[ScriptedTurn], list[Fault], str | None, dict[str, str]]:
    """Read a script file: a list of turns, or {"turns", "faults", "api_key", "variables"}."""
    data = json.loads(path.read_text())
    if isinstance(data, list):
        data = {"turns": data}
    turns = [ScriptedTurn.from_dict(t) for t in data.get("turns", [])]
    faults = [Fault(**f) for f in data.get("faults", [])]
    return turns, faults, data.get("api_key"), {str(k): str(v) for k, v in (data.get("variables") or {}).items()}


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: serve a script file until Ctrl+C."""
    parser = argparse.ArgumentParser(description="Fake Anthropic/OpenAI model server that answers from a script.")
    parser.add_argument("--script", type=Path, required=True, help="JSON script: turns, optional faults and api_key")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (printed at start)")
    parser.add_argument("--workspace", default=None, help="fills {workspace} in the script's tool-call arguments")
    parser.add_argument("--log", type=Path, default=None, help="append every request received to this file (JSON lines)")
    args = parser.parse_args(argv)
    try:
        turns, faults, api_key, variables = read_script(args.script)
    except (OSError, ValueError, TypeError, KeyError) as exc:
        print(f"fake_models: cannot read script {args.script}: {exc}", file=sys.stderr)
        return 3
    if args.workspace is not None:
        variables["workspace"] = args.workspace
    FakeModelServer(turns, faults, api_key, args.host, args.port, variables, args.log).serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
