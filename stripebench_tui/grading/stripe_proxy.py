"""A pass-through HTTP proxy in front of a Stripe backend that records requests and can inject faults.

Graders point a copy of the agent's app at ``StripeProxy.url`` through ``STRIPE_API_BASE``. Every request is
forwarded to ``upstream`` (the emulator or https://api.stripe.com alike: this is a public-means tool, it never
calls an emulator-only endpoint) and recorded with what graders judge by: the API key's kind, the
``Idempotency-Key``, the ``Stripe-Version``, the SDK version in the ``User-Agent`` and the form body.

Faults apply to requests matching ``fault_methods`` and ``fault_path`` (a path prefix, or with ``fault_exact`` that
path only). ``plan`` holds the actions
for the next matching requests, first first; when it is empty, ``down`` answers each one 503 (an outage).
Actions: ``pass``; ``500``/``503``/``429`` (answered by the proxy, never forwarded); ``lost`` (forwarded, so Stripe
does the work, but the app gets a 500); ``delay:S`` (held S seconds, then forwarded). ``faults(plan, down)`` sets
both for a block and clears them after, whatever happens. ``holding()`` makes an overlap happen by construction:
the next matching request is held until a second one has arrived and been answered by Stripe (or the grader
releases it, or ``hold_limit`` passes for an app that never sends a second one), then forwarded.
With ``restricted_to`` set, a restricted key (``rk_…``) is refused with 403 outside that path prefix, as Stripe
refuses a key without the permission. Served by uvicorn/Starlette on a background thread (``background_server``),
forwarding with httpx.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from stripebench_tui.background_server import BackgroundServer
from stripebench_tui.core.api_keys import api_key, key_kind

log = logging.getLogger(__name__)
FORWARD_HEADERS = ("authorization", "idempotency-key", "stripe-version", "content-type", "stripe-account",
                   "user-agent", "x-stripe-client-user-agent")
RETURN_HEADERS = ("request-id", "stripe-version", "idempotency-key", "idempotent-replayed", "original-request",
                  "stripe-should-retry")
_UA_VERSION = re.compile(r"PythonBindings/(\d+(?:\.\d+)*)")
HOLD_LIMIT = 30.0  # how long a held request waits for a second one (an app that serializes never sends it)


def stripe_error(status: int, message: str, type_: str, code: str | None = None) -> bytes:
    """A Stripe-shaped JSON error body (``status`` is for the caller's response; Stripe bodies do not carry it)."""
    body: dict[str, Any] = {"type": type_, "message": message}
    if code:
        body["code"] = code
    return json.dumps({"error": body}).encode()


FAULTS: dict[str, tuple[int, bytes]] = {
    "500": (500, stripe_error(500, "An unknown error occurred (injected by the grader's proxy).", "api_error")),
    "503": (503, stripe_error(503, "Stripe is temporarily unavailable (injected by the grader's proxy).", "api_error")),
    "429": (429, stripe_error(429, "Too many requests hit the API too quickly (injected by the grader's proxy).",
                              "invalid_request_error", "rate_limit")),
}


def sdk_version(user_agent: str) -> str | None:
    """The stripe-python version in a ``User-Agent`` (``PythonBindings/x.y.z``), or None."""
    m = _UA_VERSION.search(user_agent or "")
    return m.group(1) if m else None


@dataclass
class Recorded:
    """One request the app sent to Stripe through the proxy, and what the proxy did with it."""

    t: float  # time.monotonic() on arrival
    method: str
    path: str  # without the query string
    key_kind: str  # "rk_test", "sk_test", … or "none" (core.api_keys.key_kind)
    idempotency_key: str | None
    stripe_version: str | None
    sdk_version: str | None  # from the User-Agent's PythonBindings/x.y.z
    form: dict[str, str]
    action: str  # pass | 500 | 503 | 429 | lost | delay:S | hold | down | refused
    status: int = 0  # what the app got
    object_id: str | None = None  # the id in Stripe's answer (even when the app never saw it)
    answered: float = 0.0  # time.monotonic() when the proxy answered (the app cannot send its retry before)


class Hold:
    """One request held by the proxy until a second matching request has been answered (see ``StripeProxy.holding``).

    ``reached`` is set once a request is being held (graders also set it when they know none will come);
    ``overlapped`` tells whether a second request arrived while it was held.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.reached = threading.Event()
        self.overlapped = False
        self.taken = False  # a request is (or was) held by this hold
        self._loop = loop
        self._released = asyncio.Event()

    def release(self) -> None:
        """Let the held request go on (safe from any thread, any number of times)."""
        with contextlib.suppress(RuntimeError):  # the proxy's loop is already closed: nothing is held any more
            self._loop.call_soon_threadsafe(self._released.set)

    async def wait(self, limit: float) -> None:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._released.wait(), limit)


@dataclass
class StripeProxy:
    """A recording, fault-injecting HTTP proxy to ``upstream``; started on construction, ``close()`` to stop."""

    upstream: str
    fault_path: str = "/v1/"
    fault_methods: tuple[str, ...] = ("POST",)
    fault_exact: bool = False  # faults apply to ``fault_path`` itself only, not to the paths under it
    restricted_to: str | None = None  # rk_ keys are refused outside this path prefix (None: never)
    plan: list[str] = field(default_factory=list)
    down: bool = False
    seen: list[Recorded] = field(default_factory=list)
    hold_limit: float = HOLD_LIMIT
    # Told of every answered request, on the proxy's thread (the episode's request log in real test mode):
    # on_answer(method, path, query, body, headers, status, reply_headers, reply_body_bytes, seconds).
    on_answer: Callable[..., None] | None = None

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._client: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._hold: Hold | None = None

        @contextlib.asynccontextmanager
        async def lifespan(_app: Starlette) -> AsyncIterator[None]:
            self._loop = asyncio.get_running_loop()
            async with httpx.AsyncClient(timeout=60, trust_env=False) as client:
                self._client = client
                yield

        app = Starlette(routes=[Route("/{path:path}", self._handle, methods=["GET", "POST", "DELETE"])],
                        lifespan=lifespan)
        self._served = BackgroundServer(app, "the grader's Stripe proxy", lifespan="on", log_level="critical").start()

    @property
    def url(self) -> str:
        """Where the app should send its Stripe calls (its ``STRIPE_API_BASE``)."""
        return self._served.url

    def requests(self) -> list[Recorded]:
        """Every request seen so far, first first."""
        with self._lock:
            return list(self.seen)

    @contextlib.contextmanager
    def faults(self, plan: list[str], down: bool = False) -> Iterator[None]:
        """``plan`` and ``down`` for the block; both cleared after it, also when it raises."""
        with self._lock:
            self.plan, self.down = list(plan), down
        try:
            yield
        finally:
            with self._lock:
                self.plan, self.down = [], False

    @contextlib.contextmanager
    def holding(self) -> Iterator[Hold]:
        """Hold the next matching request until a second one has been answered; released at the latest on exit."""
        assert self._loop is not None
        hold = Hold(self._loop)
        with self._lock:
            self._hold = hold
        try:
            yield hold
        finally:
            with self._lock:
                self._hold = None
            hold.release()

    def close(self) -> None:
        """Stop serving and wait for the server thread."""
        if self._hold is not None:
            self._hold.release()
        self._served.stop()

    def __enter__(self) -> StripeProxy:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _next_action(self, method: str, path: str, key: str) -> tuple[str, Hold | None]:
        """What to do with this request, and the hold it is held by (action "hold") or releases (any other)."""
        if self.restricted_to is not None and key.startswith("rk_") and not path.startswith(self.restricted_to):
            return "refused", None
        matches = path == self.fault_path if self.fault_exact else path.startswith(self.fault_path)
        if method not in self.fault_methods or not matches:
            return "pass", None
        with self._lock:
            hold = self._hold
            if hold is not None and not hold.taken:
                hold.taken = True
                return "hold", hold
            if hold is not None:
                hold.overlapped = True
            if self.plan:
                return self.plan.pop(0), hold
            return ("down" if self.down else "pass"), hold

    async def _handle(self, request: Request) -> Response:
        arrived = time.monotonic()
        body = await request.body()
        path = request.url.path
        key = api_key(request.headers.get("authorization") or "")
        form = dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
        action, hold = self._next_action(request.method, path, key)
        seen = Recorded(arrived, request.method, path, key_kind(key), request.headers.get("idempotency-key"),
                        request.headers.get("stripe-version"), sdk_version(request.headers.get("user-agent") or ""),
                        form, action)
        with self._lock:
            self.seen.append(seen)
        headers: dict[str, str] = {}
        if action == "refused":
            status, payload = 403, stripe_error(
                403, f"The provided key '{key[:12]}…' does not have the required permissions for this endpoint "
                f"on account. Having the 'rak_payment_intent_write' permission would allow this request to continue.",
                "invalid_request_error", "permission_error")  # like Stripe for a key without the permission
        elif action in FAULTS:
            status, payload = FAULTS[action]
        elif action == "down":
            status, payload = FAULTS["503"]
        else:
            if action.startswith("delay:"):
                await asyncio.sleep(float(action.split(":", 1)[1]))
            elif action == "hold" and hold is not None:
                hold.reached.set()
                await hold.wait(self.hold_limit)
            try:
                status, payload, headers = await self._forward(request, body)
            except httpx.HTTPError as exc:
                status, payload = 502, stripe_error(502, f"the grader's proxy could not reach Stripe: {exc}", "api_error")
            try:
                seen.object_id = json.loads(payload).get("id")
            except (ValueError, AttributeError):
                pass
            if action == "lost":  # Stripe did the work; the app never hears about it
                status, payload, headers = 500, FAULTS["500"][1], {}
        seen.status = status
        seen.answered = time.monotonic()
        listener = self.on_answer
        if listener is not None:
            try:
                listener(request.method, path, request.url.query, body, {k.lower(): v for k, v in request.headers.items()},
                         status, headers, payload, seen.answered - arrived)
            except Exception:  # an observer's bug must never change an answer
                log.exception("stripe proxy listener failed on %s %s", request.method, path)
        if hold is not None and action != "hold":  # the second request has its answer: the held one may go on
            hold.release()
        return Response(payload, status_code=status, headers=headers, media_type="application/json")

    async def _forward(self, request: Request, body: bytes) -> tuple[int, bytes, dict[str, str]]:
        assert self._client is not None
        target = self.upstream.rstrip("/") + request.scope.get("raw_path", request.url.path.encode()).decode()
        if request.url.query:
            target += "?" + request.url.query
        headers = {k: v for k, v in request.headers.items() if k.lower() in FORWARD_HEADERS}
        response = await self._client.request(request.method, target, content=body, headers=headers)
        back = {k: v for k, v in response.headers.items() if k.lower() in RETURN_HEADERS}
        return response.status_code, response.content, back


__all__ = ["FAULTS", "HOLD_LIMIT", "Hold", "Recorded", "StripeProxy", "api_key", "key_kind", "sdk_version", "stripe_error"]
