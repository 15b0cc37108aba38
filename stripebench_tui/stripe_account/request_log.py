"""The Stripe request log: every ``/v1`` request the emulator answers becomes a ``stripe_request`` event on the bus,
and every webhook delivery to the app a ``webhook_delivery`` event.

Against real test mode the episode puts a ``grading.stripe_proxy.StripeProxy`` in front of Stripe (every process's
``STRIPE_API_BASE``) and the log listens to it instead (``attach_proxy``). The emulator calls ``RequestLog.hook``
after answering each request (``emulator.response_hooks``), on its serving
thread. The event is built there (redacted, bodies capped) and handed to the episode's loop, which publishes it:
the bus stamps it with the turn that is current, so a request made by a tool call belongs to that call's turn
(the hook runs before the client even has its answer, long before the tool result comes back). ``turn_end_hook``
publishes whatever is still queued, so no request slips into the next turn; ``final_hook`` does the same and then
detaches, since nothing may follow ``episode_end``.

``source`` says who asked, from what the request carries: our own clients send ``SOURCE_HEADER`` (graders
``grader``; the watcher's ``watcher`` polls are left out of the log), a browser says ``Mozilla/…`` or uses a
publishable key (stripe.js), an official SDK says ``Stripe/…`` (``app``: the app's code or a script run from the
agent's shell look alike), and anything else (curl, a hand-made HTTP call) is taken as the agent's own request.
``key_kind`` keeps the kind of the API key the request carried (``sk_test``, ``rk_test``…), never the key.

Webhook deliveries come from the emulator's ``delivery_hooks`` (each attempt, as the app answered it; real Stripe's
deliveries go to the app directly and are not seen) and from graders, whose test deliveries
(``grading.webhooks.WebhookSender``) reach ``record_delivery`` through the grading context's ``on_delivery``.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import deque
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

import orjson

from stripebench_tui.core.api_keys import api_key, key_kind
from stripebench_tui.core.bus import EventBus
from stripebench_tui.core.driver import Driver
from stripebench_tui.core.events import SIGNED, SOURCE_HEADER, Event, StripeRequest, WebhookDelivery
from stripebench_tui.core.json_value import JSONValue
from stripebench_tui.core.profile import PUBLISH, harness_part
from stripebench_tui.core.redact import Redactor
from stripebench_tui.findings.base import path_parts

if TYPE_CHECKING:  # the emulator is loaded when an episode uses it
    from stripebench_emulator import Emulator, HookReply

BODY_CAP = 4000  # characters kept of each body; the rest is counted, not kept
MAX_IDS = 20  # object ids kept per request (a list answer can name a hundred)
AGENT, APP, BROWSER, GRADER, WATCHER = "agent", "app", "browser", "grader", "watcher"


def request_source(headers: dict[str, str]) -> str:
    """Who sent a request with these (lower-cased) headers: agent | app | browser | grader | watcher."""
    own = headers.get(SOURCE_HEADER.lower(), "").strip().lower()
    if own:
        return own
    agent = headers.get("user-agent", "")
    if agent.startswith("Mozilla/") or headers.get("origin"):
        return BROWSER
    auth = headers.get("authorization", "")
    if "pk_test_" in auth or "pk_live_" in auth:
        return BROWSER
    if agent.startswith("Stripe/"):  # every official SDK's User-Agent: Stripe/v1 PythonBindings/…, NodeBindings/…
        return APP
    return AGENT


def capped(text: str, cap: int = BODY_CAP) -> str:
    """``text`` cut to ``cap`` characters, saying how much was left out."""
    if len(text) <= cap:
        return text
    return f"{text[:cap]}… [{len(text) - cap} more characters]"


def object_ids(path: str, body: JSONValue) -> list[str]:
    """The object ids a request touched: those in its path, the answer's own id, a list answer's items."""
    found: list[str] = [seg for seg, is_id in path_parts(path) or () if is_id]
    if isinstance(body, dict):
        if isinstance(own := body.get("id"), str) and body.get("object") not in ("list", "search_result"):
            found.append(own)
        for item in data if isinstance(data := body.get("data"), list) else ():
            if isinstance(item, dict) and isinstance(listed := item.get("id"), str):
                found.append(listed)
    seen: list[str] = []
    for i in found:
        if i not in seen:
            seen.append(i)
    return seen[:MAX_IDS]


def request_text(method: str, query: str, body: bytes, headers: dict[str, str]) -> str:
    """The request's parameters as text: the query of a GET, the form or JSON body otherwise."""
    if method in ("GET", "DELETE") and not body:
        return "&".join(f"{k}={v}" for k, v in parse_qsl(query, keep_blank_values=True))
    text = body.decode("utf-8", "replace")
    if "json" not in headers.get("content-type", ""):
        with contextlib.suppress(ValueError):
            text = "&".join(f"{k}={v}" for k, v in parse_qsl(text, keep_blank_values=True, strict_parsing=True))
    return text


def build_event(method: str, path: str, query: str, body: bytes, headers: dict[str, str], status: int,
                reply_headers: dict[str, str], reply_body: JSONValue, seconds: float, redactor: Redactor,
                source: str | None = None) -> StripeRequest:
    """One ``stripe_request`` event from a request and its answer (bodies redacted and capped)."""
    error = reply_body.get("error") if isinstance(reply_body, dict) and status >= 400 else None
    error = error if isinstance(error, dict) else {}
    try:
        response = orjson.dumps(reply_body).decode()
    except (TypeError, orjson.JSONEncodeError):
        response = str(reply_body)
    return StripeRequest(
        request_id=str(reply_headers.get("Request-Id") or reply_headers.get("request-id") or ""),
        method=method, path=path, status=status,
        error_type=str(error.get("type") or ""), error_code=str(error.get("code") or ""),
        idempotency_key=redactor.text(headers.get("idempotency-key", "")),
        api_version=str(reply_headers.get("Stripe-Version") or reply_headers.get("stripe-version")
                        or headers.get("stripe-version") or ""),
        latency=round(seconds, 6), object_ids=object_ids(path, reply_body),
        source=source or request_source(headers), key_kind=key_kind(api_key(headers.get("authorization", ""))),
        request_body=capped(redactor.text(request_text(method, query, body, headers))),
        response_body=capped(redactor.text(response)),
    )


def delivery_event(record: dict[str, Any], redactor: Redactor) -> WebhookDelivery:
    """One ``webhook_delivery`` event from what an emulator's delivery hook heard (Stripe signs its own deliveries)."""
    status = record.get("status_code")
    millis = record.get("duration_ms")
    return WebhookDelivery(
        event_id=str(record.get("event") or ""), event_type=str(record.get("event_type") or ""),
        url=redactor.text(str(record.get("url") or "")), sender="stripe", signature=SIGNED,
        attempt=int(record.get("attempt") or 1), status=status if isinstance(status, int) else 0,
        error=redactor.text(str(record.get("error") or "")),
        latency=round(millis / 1000, 6) if isinstance(millis, (int, float)) else None,
        response_body=capped(redactor.text(str(record.get("response_body") or ""))))


class RequestLog:
    """Publishes the emulator's answered requests on ``bus`` as ``stripe_request`` events (see the module doc)."""

    def __init__(self, bus: EventBus, secrets: list[str] | None = None) -> None:
        self.bus = bus
        self.redactor = Redactor(secrets or ())
        self.logged = 0
        self._pending: deque[Event] = deque()
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._emulator: Any = None
        self._proxy: Any = None

    def attach(self, emulator: Emulator) -> None:
        """Start logging ``emulator``'s requests; call from the episode's running loop."""
        self._loop = asyncio.get_running_loop()
        self._emulator = emulator
        emulator.response_hooks.append(self.hook)
        emulator.delivery_hooks.append(self.delivery_hook)

    # Any: a grading.stripe_proxy.StripeProxy (its hooks are all this uses; this package does not import grading)
    def attach_proxy(self, proxy: Any) -> None:
        """Start logging what a ``grading.stripe_proxy.StripeProxy`` answers (real test mode); from the loop."""
        self._loop = asyncio.get_running_loop()
        self._proxy = proxy
        proxy.on_answer = self.proxy_hook

    def detach(self) -> None:
        """Stop logging (idempotent)."""
        emulator, self._emulator = self._emulator, None
        if emulator is not None and self.hook in emulator.response_hooks:
            emulator.response_hooks.remove(self.hook)
        if emulator is not None and self.delivery_hook in emulator.delivery_hooks:
            emulator.delivery_hooks.remove(self.delivery_hook)
        proxy, self._proxy = self._proxy, None
        if proxy is not None:
            proxy.on_answer = None

    def proxy_hook(self, method: str, path: str, query: str, body: bytes, headers: dict[str, str], status: int,
                   reply_headers: dict[str, str], payload: bytes, seconds: float) -> None:
        """The proxy's listener (its thread): like ``hook``, from the raw answer."""
        try:
            reply_body: Any = orjson.loads(payload)
        except orjson.JSONDecodeError:
            reply_body = payload.decode("utf-8", "replace")
        self._record(method, path, query, body, headers, status, reply_headers, reply_body, seconds)

    def hook(self, method: str, path: str, query: str, body: bytes, headers: dict[str, str], reply: HookReply,
             seconds: float) -> None:
        """The emulator's response hook (serving thread): queue the event, ask the loop to publish it."""
        self._record(method, path, query, body, headers, reply.status, reply.headers, reply.body, seconds)

    def _record(self, method: str, path: str, query: str, body: bytes, headers: dict[str, str], status: int,
                reply_headers: dict[str, str], reply_body: JSONValue, seconds: float) -> None:
        if not path.startswith("/v1/"):
            return
        source = request_source(headers)
        if source == WATCHER:
            return
        self._queue(build_event(method, path, query, body, headers, status, reply_headers, reply_body, seconds,
                                self.redactor, source))

    def delivery_hook(self, record: dict[str, Any]) -> None:
        """The emulator's delivery hook (its delivering thread): one attempt at a webhook delivery to the app."""
        self._queue(delivery_event(record, self.redactor))

    def record_delivery(self, delivery: WebhookDelivery) -> None:
        """A grader's test delivery (any thread): redacted like the rest, then published with them."""
        delivery.url = self.redactor.text(delivery.url)
        delivery.error = self.redactor.text(delivery.error)
        delivery.response_body = capped(self.redactor.text(delivery.response_body))
        self._queue(delivery)

    def _queue(self, event: Event) -> None:
        """Hand ``event`` (made on another thread) to the episode's loop, which publishes it."""
        with self._lock:
            self._pending.append(event)
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop has closed: the episode is over
                loop.call_soon_threadsafe(self.flush)

    def flush(self) -> int:
        """Publish every queued request now (on the loop); returns how many."""
        with self._lock:
            events = list(self._pending)
            self._pending.clear()
        for event in events:
            self.bus.publish_nowait(event)
        self.logged += len(events)
        return len(events)

    @harness_part(PUBLISH)
    async def turn_end_hook(self, driver: Driver) -> None:
        """Driver turn-end hook: this turn's requests are published before the turn closes."""
        self.flush()

    @harness_part(PUBLISH)
    async def final_hook(self, driver: Driver) -> None:
        """Driver final hook: publish the last requests and stop logging (nothing may follow episode_end)."""
        self.flush()
        self.detach()


__all__ = ["AGENT", "APP", "BODY_CAP", "BROWSER", "GRADER", "RequestLog", "build_event", "capped", "delivery_event",
           "object_ids", "request_source"]
