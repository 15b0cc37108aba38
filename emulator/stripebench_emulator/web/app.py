"""The Starlette application: ``/v1/*`` goes through ``dispatch.handle``; ``/_emulator/*`` and pages are routes.

Every ``/_emulator/`` request without the server's control token is answered 403 here (see ``control``). Every
request's body, on every route, is read here first and refused with a 413 past ``MAX_BODY_BYTES`` (``_read_body``).
"""

from __future__ import annotations

import inspect
import logging
import time

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route
from starlette.types import Message, Receive, Scope, Send

import stripebench_emulator.api  # noqa: F401 - registers every resource's routes
from stripebench_emulator.model.engine import Emulator
from stripebench_emulator.model.registry import PAGE_ROUTES
from stripebench_emulator.web import faults, pages, webhooks  # noqa: F401 - register the pages and services
from stripebench_emulator.web.control import CONTROL_HEADER, control_routes, forbidden_body, is_control_path, token_matches
from stripebench_emulator.web.dispatch import MAX_BODY_BYTES, Reply, finish, handle, too_large

log = logging.getLogger(__name__)

_METHODS = ["GET", "POST", "DELETE", "PUT", "PATCH", "OPTIONS"]


class _EmulatorApp(Starlette):
    """Starlette, plus a direct path for ``/v1/*``: API calls skip routing and middleware (a quarter of the CPU)."""

    emulator: Emulator
    v1_pages = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        path = scope.get("path", "")
        # an API path is never a control path (checked first: it is nearly every request)
        if not path.startswith("/v1/") and is_control_path(path) and not self._authorized(scope):
            body = forbidden_body()
            refused = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
            await send({"type": "http.response.start", "status": 403, "headers": refused})
            await send({"type": "http.response.body", "body": body})
            return
        payload = await _read_body(self.emulator, scope, receive, send)
        if payload is None:  # refused (413 sent) or the client went away
            return
        if not path.startswith("/v1/") or self.v1_pages:  # a page under /v1 must keep Starlette's routing
            await super().__call__(scope, _replay(payload, receive), send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        emulator = self.emulator
        query = scope.get("query_string", b"").decode("latin-1")
        if emulator.request_hooks or emulator.response_hooks:
            reply = await _answer(emulator, scope["method"], path, query, payload, headers)
        else:  # nothing to run around the API (no faults, no request log): call it directly
            reply = handle(emulator, scope["method"], path, query, payload, headers, lowered=True)
        body = reply.encoded()
        raw_headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        raw_headers += [(_header_name(k), str(v).encode("latin-1")) for k, v in reply.headers.items()]
        await send({"type": "http.response.start", "status": reply.status, "headers": raw_headers})
        await send({"type": "http.response.body", "body": body})

    def _authorized(self, scope: Scope) -> bool:
        wanted = CONTROL_HEADER.lower().encode("latin-1")
        given = next((v.decode("latin-1") for k, v in scope.get("headers", []) if k.lower() == wanted), None)
        return token_matches(self.emulator.control_token, given)


async def _read_body(emulator: Emulator, scope: Scope, receive: Receive, send: Send) -> bytes | None:
    """The request's whole body, for every route: at most ``MAX_BODY_BYTES``, else a 413 (sent here, from the
    declared ``Content-Length`` before anything is read, or once the streamed body passes the limit) and None.
    None too when the client goes away first."""
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                declared = int(value)
            except ValueError:
                declared = 0  # the HTTP parser has refused a malformed length already
            if declared > MAX_BODY_BYTES:
                await _refuse_too_large(emulator, send, declared)
                return None
    chunks = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:  # stop reading: refused whole, the connection closed after the answer
            await _refuse_too_large(emulator, send)
            return None
        chunks.append(chunk)
        if not message.get("more_body"):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """An ASGI ``receive`` that gives the body already read, then whatever the connection says next."""
    given = False

    async def replayed() -> Message:
        nonlocal given
        if given:
            return await receive()
        given = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replayed


async def _refuse_too_large(emulator: Emulator, send: Send, size: int | None = None) -> None:
    request_id = "req_" + emulator.ids.token("req", 14)
    body = Reply(413, too_large(size).body(request_id)).encoded()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
               (b"request-id", request_id.encode()), (b"connection", b"close")]
    await send({"type": "http.response.start", "status": 413, "headers": headers})
    await send({"type": "http.response.body", "body": body})


_HEADER_NAMES: dict[str, bytes] = {}


def _header_name(name: str) -> bytes:
    """A response header's name as ASGI wants it (lower case bytes); the few names in use are encoded once."""
    encoded = _HEADER_NAMES.get(name)
    if encoded is None:
        encoded = name.lower().encode("latin-1")
        if len(_HEADER_NAMES) < 256:
            _HEADER_NAMES[name] = encoded
    return encoded


async def _answer(emulator: Emulator, method: str, path: str, query: str, body: bytes,
                  headers: dict[str, str]) -> Reply:
    """Run the request hooks (faults), then the API itself, then the response hooks (the request log)."""
    started = time.perf_counter()
    reply = await _serve_hooked(emulator, method, path, query, body, headers)
    if emulator.response_hooks:
        seconds = time.perf_counter() - started
        for hook in list(emulator.response_hooks):
            try:
                hook(method, path, query, body, headers, reply, seconds)
            except Exception:  # an observer's bug must never change an answer
                log.exception("emulator response hook failed on %s %s", method, path)
    return reply


async def _serve_hooked(emulator: Emulator, method: str, path: str, query: str, body: bytes,
                        headers: dict[str, str]) -> Reply:
    for hook in list(emulator.request_hooks):
        outcome = hook(method, path, headers)
        reply = await outcome if inspect.isawaitable(outcome) else outcome
        if reply is not None:
            return finish(reply, "req_" + emulator.ids.token("req", 14),
                          headers.get("stripe-version") or emulator.api_version)
    # both callers pass ASGI's header names, which are lower case
    return handle(emulator, method, path, query, body, headers, lowered=True)


def create_app(emulator: Emulator) -> Starlette:
    """Build the ASGI app serving ``emulator``."""

    async def api(request: Request) -> Response:
        reply = await _answer(emulator, request.method, request.url.path, request.url.query, await request.body(),
                              dict(request.headers))
        return Response(reply.encoded(), status_code=reply.status, headers=reply.headers, media_type="application/json")

    routes: list[BaseRoute] = list(control_routes(emulator))
    for path, methods, factory in PAGE_ROUTES:
        routes.append(Route(path, factory(emulator), methods=methods))
    # Everything else, /v1 or not, gets Stripe's JSON errors rather than Starlette's plain-text 404/405.
    routes.append(Route("/{rest:path}", api, methods=_METHODS))
    app = _EmulatorApp(routes=routes)
    app.emulator = emulator
    app.v1_pages = any(path.startswith("/v1/") for path, _, _ in PAGE_ROUTES)
    app.state.emulator = emulator
    return app
