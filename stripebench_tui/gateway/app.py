"""The gateway server: a streaming reverse proxy for model APIs that shows each exchange to a tap.

It serves the Anthropic Messages API (``/v1/messages``, ``/v1/messages/count_tokens``),
OpenAI Chat Completions (``/v1/chat/completions``) and Responses (``/v1/responses``);
any other path is forwarded untouched. The harness authenticates with the
gateway's per-episode dummy key; the gateway swaps it for the real provider key
(which the harness never sees). Streams are passed through chunk by chunk as
they arrive (nothing is buffered) while a parser assembles the reply on the side.
Upstream errors (a 429 with Retry-After, a 500) reach the harness as sent; a
stream cut off upstream is cut off for the harness too; what was seen before is
still reported to the tap.

The server runs on its own thread and event loop (``start``/``stop``, or ``with``),
so a slow tap consumer never delays the bytes, and so it never touches the
signal handlers of the program that embeds it.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from stripebench_tui.background_server import BackgroundServer, ServerDidNotStart
from stripebench_tui.gateway.hold import HeldStream, Holds, hold_reply
from stripebench_tui.gateway.sse import SseDecoder
from stripebench_tui.gateway.traffic import Exchange, PassThrough, Tap, Traffic
from stripebench_tui.gateway.wire import ANTHROPIC, OPENAI_CHAT, OPENAI_RESPONSES, Wire

DEFAULT_ANTHROPIC = "https://api.anthropic.com"
DEFAULT_OPENAI = "https://api.openai.com/v1"

# Request headers that belong to one hop, carry the key, or would make the upstream compress what we parse.
_DROP_REQUEST = {"host", "content-length", "connection", "keep-alive", "transfer-encoding", "te", "upgrade",
                 "x-api-key", "authorization", "accept-encoding", "proxy-authorization"}
_DROP_RESPONSE = {"content-length", "connection", "keep-alive", "transfer-encoding", "content-encoding", "date", "server"}


_CLOSED = "the harness closed the connection"


class GatewayError(RuntimeError):
    """The gateway cannot start (port in use, …)."""


@dataclass
class Upstream:
    """Where each API family is forwarded, and with which key (never shown to the harness)."""

    anthropic_url: str = DEFAULT_ANTHROPIC
    anthropic_key: str | None = None
    openai_url: str = DEFAULT_OPENAI
    openai_key: str | None = None

    @classmethod
    def from_env(cls, base_url: str | None = None, environ: Mapping[str, str] | None = None,
                 api_key: str | None = None) -> Upstream:
        """From ``--base-url``/``api_key`` when given (both families), else the providers' usual variables."""
        env = os.environ if environ is None else environ
        anthropic_key = api_key or env.get("ANTHROPIC_API_KEY") or env.get("ANTHROPIC_AUTH_TOKEN") or None
        openai_key = api_key or env.get("OPENAI_API_KEY") or None
        if base_url:
            return cls(base_url, anthropic_key, base_url, openai_key)
        return cls(env.get("ANTHROPIC_BASE_URL") or DEFAULT_ANTHROPIC, anthropic_key,
                   env.get("OPENAI_BASE_URL") or DEFAULT_OPENAI, openai_key)

    def target(self, family: str, path: str, query: str) -> tuple[str, str | None]:
        """The upstream URL for a request path (a base ending in /v1 is not doubled) and the key to send."""
        base, key = (self.anthropic_url, self.anthropic_key) if family == "anthropic" else (self.openai_url, self.openai_key)
        base = base.rstrip("/")
        if urlsplit(base).path.endswith("/v1") and path.startswith("/v1/"):
            path = path[3:]
        return base + path + (f"?{query}" if query else ""), key

    @property
    def secrets(self) -> list[str]:
        return [k for k in (self.anthropic_key, self.openai_key) if k]


def _given_key(request: Request) -> str:
    auth = request.headers.get("authorization", "")
    return request.headers.get("x-api-key") or (auth[7:].strip() if auth.lower().startswith("bearer ") else "")


def _family(request: Request) -> str:
    path = request.url.path
    if path.startswith("/v1/messages") or "anthropic-version" in request.headers or "x-api-key" in request.headers:
        return "anthropic"
    return "openai"


class Gateway:
    """The model-API gateway (see the module docstring)."""

    ROUTES: dict[str, Wire] = {"/v1/messages": ANTHROPIC, "/v1/chat/completions": OPENAI_CHAT, "/v1/responses": OPENAI_RESPONSES}

    # Any: a gateway.recording.ModelRecorder or anything with its ended/answer methods (tests pass recorders of their own)
    def __init__(self, upstream: Upstream, tap: Tap | None = None, *, dummy_key: str | None = None,
                 host: str = "127.0.0.1", port: int = 0, timeout: float = 600.0, recorder: Any = None,
                 holds: Holds | None = None) -> None:
        self.upstream = upstream
        self.tap: Tap = tap or PassThrough()
        # Optional gateway.recording.ModelRecorder: gets each upstream response's bytes, may answer from a recording.
        self.recorder = recorder
        self.holds = holds  # operator approval of tool calls (gateway.hold); None: every response streams through
        self.dummy_key = dummy_key or "sk-stripebench-" + secrets.token_hex(16)
        self.host, self.port = host, port
        self.timeout = timeout
        self.traffic = Traffic()
        self.loop: asyncio.AbstractEventLoop | None = None
        self._client: httpx.AsyncClient | None = None
        self._served: BackgroundServer | None = None
        routes = [Route(path, self._model_route(wire), methods=["POST"]) for path, wire in self.ROUTES.items()]
        routes.append(Route("/{path:path}", self._other, methods=["GET", "POST", "PUT", "DELETE", "PATCH"]))
        self.app = Starlette(routes=routes)

    # ---- addresses ----

    @property
    def url(self) -> str:
        """Root URL: the Anthropic base URL (ANTHROPIC_BASE_URL)."""
        return f"http://{self.host}:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """Base URL for OpenAI clients (OPENAI_BASE_URL)."""
        return f"{self.url}/v1"

    # ---- requests ----

    def _client_now(self) -> httpx.AsyncClient:
        if self._client is None:
            limits = httpx.Limits(max_connections=64, max_keepalive_connections=16)
            self._client = httpx.AsyncClient(timeout=httpx.Timeout(self.timeout, connect=10.0), limits=limits)
        return self._client

    def _refuse(self, request: Request, wire: Wire | None) -> Response | None:
        if _given_key(request) == self.dummy_key:
            return None
        wire = wire or (ANTHROPIC if _family(request) == "anthropic" else OPENAI_CHAT)
        return JSONResponse(wire.error_body(401, "stripebench gateway: wrong API key (use the episode's key)"), status_code=401)

    def _headers(self, request: Request, family: str) -> dict[str, str]:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _DROP_REQUEST}
        _, key = self.upstream.target(family, "", "")
        if key:
            if family == "anthropic" and "authorization" not in request.headers:
                headers["x-api-key"] = key
            else:
                headers["authorization"] = f"Bearer {key}"
        headers["accept-encoding"] = "identity"
        return headers

    @staticmethod
    def _response_headers(upstream: httpx.Response) -> dict[str, str]:
        return {k: v for k, v in upstream.headers.items() if k.lower() not in _DROP_RESPONSE}

    async def _other(self, request: Request) -> Response:
        """Any other path (count_tokens, models, …): forwarded as is, key swapped, nothing recorded."""
        refused = self._refuse(request, None)
        if refused is not None:
            return refused
        family = _family(request)
        url, _ = self.upstream.target(family, request.url.path, request.url.query)
        body = await request.body()
        try:
            upstream = None if self.recorder is None else await self.recorder.answer_other(request.method, request.url.path, body)
            if upstream is None:
                upstream = await self._client_now().request(request.method, url, content=body,
                                                            headers=self._headers(request, family))
        except httpx.HTTPError as exc:
            wire = ANTHROPIC if family == "anthropic" else OPENAI_CHAT
            return JSONResponse(wire.error_body(502, _unreachable(url, exc)), status_code=502)
        return Response(upstream.content, upstream.status_code, headers=self._response_headers(upstream))

    def _model_route(self, wire: Wire) -> Callable[[Request], Awaitable[Response | _Relay]]:
        async def handle(request: Request) -> Response | _Relay:
            return await self._model(request, wire)

        return handle

    async def _model(self, request: Request, wire: Wire) -> Response | _Relay:
        refused = self._refuse(request, wire)
        if refused is not None:
            return refused
        raw = await request.body()
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError:
            body = None
        if not isinstance(body, dict):
            return JSONResponse(wire.error_body(400,
                                                "stripebench gateway: the request body must be a JSON object"), status_code=400)
        if self.holds is not None and self.holds.originals:
            body = self.holds.restore(wire, body)  # rejected calls as the model asked for them, and why they did not run
            raw = orjson.dumps(body)
        exchange = self.traffic.arrived(wire, body, request.url.path)
        await self.tap.before(exchange)
        if exchange.body is not body:
            raw = orjson.dumps(exchange.body)
        url, _ = self.upstream.target(wire.family, request.url.path, request.url.query)
        where = urlsplit(url)
        exchange.upstream = f"{where.scheme}://{where.netloc}"
        client = self._client_now()
        started = time.perf_counter()
        try:
            upstream = await self.recorder.answer(exchange) if self.recorder is not None else None
            if upstream is None:
                upstream = await client.send(client.build_request("POST", url, content=raw,
                                                                  headers=self._headers(request, wire.family)), stream=True)
        except httpx.HTTPError as exc:
            exchange.status, exchange.error = 502, _unreachable(url, exc)
            self._after(exchange)
            return JSONResponse(wire.error_body(502, exchange.error), status_code=502)
        exchange.status = upstream.status_code
        headers = self._response_headers(upstream)
        if upstream.status_code == 200 and upstream.headers.get("content-type", "").startswith("text/event-stream"):
            return _Relay(self._relay(exchange, upstream, started), headers)
        try:
            data = await upstream.aread()
            if self.recorder is not None:
                self.recorder.chunk(exchange, data)
        except httpx.HTTPError as exc:
            exchange.error = f"upstream response cut off: {type(exc).__name__}"
            self._after(exchange)
            raise
        finally:
            await upstream.aclose()
        exchange.latency = time.perf_counter() - started
        if upstream.status_code == 200:
            try:
                exchange.reply = wire.reply(json.loads(data))
            except (ValueError, AttributeError, TypeError) as exc:
                exchange.error = f"malformed upstream reply: {exc}"
            if self.holds is not None and not exchange.error:
                data = await hold_reply(self.holds, exchange, data)
        else:
            exchange.retry_after = upstream.headers.get("retry-after", "")
            exchange.error = f"upstream answered HTTP {upstream.status_code}: {_error_message(data)}"
        self._after(exchange)
        return Response(data, upstream.status_code, headers=headers)

    async def _relay(self, exchange: Exchange, upstream: httpx.Response, started: float) -> AsyncIterator[bytes]:
        """Pass the stream through as it comes; parse it on the side."""
        decoder, parser = SseDecoder(), exchange.wire.stream()
        held = HeldStream(exchange.wire, self.holds) if self.holds is not None else None
        try:
            async for chunk in upstream.aiter_raw():
                if self.recorder is not None:  # what the model sent; the operator's edits are in the trace
                    self.recorder.chunk(exchange, chunk, True)
                # Parsed before it is passed on: a harness may close the connection as soon as it has the last event.
                for event, data in decoder.feed(chunk):
                    if parser.feed(event, data) and exchange.ttft is None:
                        exchange.ttft = time.perf_counter() - started
                if held is None:
                    yield chunk
                elif passed := held.feed(chunk):
                    yield passed
            if held is not None:  # the model's time, not the operator's
                exchange.latency, exchange.reply = time.perf_counter() - started, parser.end()
                if rest := await held.finish(exchange):
                    yield rest
        except httpx.HTTPError as exc:
            exchange.error = f"upstream stream cut off: {type(exc).__name__}"
            raise
        except BaseException:
            exchange.error = exchange.error or _CLOSED
            raise
        finally:
            exchange.latency = exchange.latency or time.perf_counter() - started
            exchange.reply = exchange.reply or parser.end()
            if exchange.reply.complete and exchange.error == _CLOSED:
                exchange.error = ""  # it had the whole reply before it hung up
            if not exchange.reply.complete and not exchange.error:
                exchange.error = exchange.reply.error or "upstream stream ended before the response was complete"
            await upstream.aclose()
            self._after(exchange)

    def _after(self, exchange: Exchange) -> None:
        if exchange.reply is not None and exchange.reply.complete:
            self.traffic.replied(exchange)
        if self.recorder is not None:
            self.recorder.ended(exchange)
        self.tap.after(exchange)

    # ---- lifecycle ----

    def start(self) -> Gateway:
        """Serve on a background thread; returns once connections are accepted."""
        self._served = BackgroundServer(self.app, "the gateway", host=self.host, port=self.port, loop_factory=_new_loop,
                                        on_loop=self._serving_on, after_serve=self._close_client)
        try:
            self._served.start()
        except ServerDidNotStart as exc:
            raise GatewayError(str(exc)) from None
        self.port = self._served.port
        return self

    def _serving_on(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop

    async def _close_client(self) -> None:
        if self._client is not None:
            await self._client.aclose()

    def stop(self) -> None:
        """Stop serving (open streams get a moment to finish) and wait for the thread."""
        if self._served is not None:
            self._served.stop()

    def __enter__(self) -> Gateway:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Relay:
    """A streamed 200 (an ASGI app) that sends each chunk as it comes, with no helper tasks; a disconnect ends it."""

    def __init__(self, chunks: AsyncIterator[bytes], headers: dict[str, str]) -> None:
        self.chunks = chunks
        self.raw_headers = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
        self.status_code = 200

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        try:
            async for chunk in self.chunks:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        finally:
            aclose = getattr(self.chunks, "aclose", None)
            if aclose is not None:
                await aclose()
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def _new_loop() -> asyncio.AbstractEventLoop:
    try:
        # optional: not on every platform (asyncio's own loop otherwise)
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is a dependency, but not on every platform
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


def _unreachable(url: str, exc: Exception) -> str:
    where = urlsplit(url)
    return f"stripebench gateway: upstream {where.scheme}://{where.netloc} unreachable ({type(exc).__name__})"


def _error_message(data: bytes) -> str:
    try:
        body: Any = json.loads(data)
    except ValueError:
        return data[:200].decode("utf-8", "replace")
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])[:200]
    return json.dumps(body)[:200]


__all__ = ["DEFAULT_ANTHROPIC", "DEFAULT_OPENAI", "Gateway", "GatewayError", "Upstream"]
