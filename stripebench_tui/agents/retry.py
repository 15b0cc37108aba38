"""Retrying provider calls with bounded exponential backoff, each retry reported.

The SDKs' own retry loops are switched off (``max_retries=0``) so that every
retry goes through here and the driver can show it as it happens.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import importlib
import inspect
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from stripebench_tui.core.agent import AgentError

T = TypeVar("T")

# on_retry(attempt, error, delay): attempt is the 1-based number of the try that failed.
RetryCallback = Callable[[int, BaseException, float], "Awaitable[None] | None"]

RETRYABLE_STATUS = {408, 409, 425, 429}  # plus every 5xx (529 is Anthropic's "overloaded")


@dataclass
class RetryPolicy:
    """How often and how long to retry a provider call."""

    max_tries: int = 5  # rate limits and 5xx answers
    network_tries: int = 3  # refused connections and timeouts: a down provider is rarely back in seconds
    backoff_base: float = 1.0  # seconds before the first retry; doubles each time
    backoff_max: float = 30.0
    retry_after_max: float = 120.0  # a provider asking for longer than this is treated as down
    on_retry: RetryCallback | None = None

    def backoff(self, attempt: int) -> float:
        """Delay after the ``attempt``-th failed try when the provider gave no retry-after."""
        return min(self.backoff_max, self.backoff_base * (2 ** (attempt - 1)))


@dataclass
class Failure:
    """What went wrong with one provider call, as far as retrying is concerned."""

    reason: str  # one line, for the user
    retryable: bool
    network: bool = False
    retry_after: float | None = None


@dataclass(frozen=True)
class SdkErrors:
    """The exception classes of one SDK (anthropic and openai share this shape).

    ``transport``: HTTP errors an SDK lets through unwrapped when a stream breaks after its headers;
    ``other``: the SDK's base error, for an error it raises from inside a stream (an ``error`` event).
    """

    status: type[BaseException]
    connection: type[BaseException]
    timeout: type[BaseException]
    transport: tuple[type[BaseException], ...] = ()
    other: type[BaseException] | None = None


class IncompleteStream(Exception):
    """A streamed reply that ended (cleanly) before it was complete: no stop reason came."""


@functools.cache
def _http_errors(name: str) -> tuple[type[BaseException], ...]:
    """The exception class ``name`` of each HTTP client the SDKs are built on (httpx, and httpx2 in newer releases)."""
    found: list[type[BaseException]] = []
    for module in ("httpx", "httpx2"):
        try:
            found.append(getattr(importlib.import_module(module), name))
        except (ImportError, AttributeError):
            continue
    return tuple(found)


def http_transport_errors() -> tuple[type[BaseException], ...]:
    """The HTTP clients' transport errors (what an SDK may let through when a stream breaks after its headers)."""
    return _http_errors("TransportError")


def _broke_midway(cause: BaseException | None) -> bool:
    """Whether the HTTP error under an SDK's connection error broke an open connection (not: could not connect)."""
    return isinstance(cause, _http_errors("TransportError")) and not isinstance(cause, _http_errors("ConnectError"))


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """Seconds from ``retry-after-ms`` / ``retry-after`` (number or HTTP date), if present."""
    if headers is None:
        return None
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms) / 1000)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        parsed = email.utils.parsedate_tz(raw)
        return None if parsed is None else max(0.0, email.utils.mktime_tz(parsed) - time.time())


def _one_line(text: str, limit: int = 200) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _provider_message(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
    return str(getattr(exc, "message", "") or exc)


def _request_of(exc: BaseException) -> Any:
    try:
        return getattr(exc, "request", None)
    except RuntimeError:  # an httpx error raised without its request
        return None


def classify(exc: BaseException, errors: SdkErrors) -> Failure | None:
    """Sort an SDK exception into retryable or not; None for anything that is not a provider error."""
    request = _request_of(exc)
    where = f" to {request.url}" if getattr(request, "url", None) else ""
    if isinstance(exc, IncompleteStream):
        return Failure(str(exc), retryable=True, network=True)
    source = f" from {request.url}" if getattr(request, "url", None) else ""
    if errors.transport and isinstance(exc, errors.transport):
        detail = _one_line(str(exc)) or type(exc).__name__
        return Failure(f"response stream{source} cut off ({detail})", retryable=True, network=True)
    if isinstance(exc, errors.timeout):
        return Failure(f"request{where} timed out", retryable=True, network=True)
    if isinstance(exc, errors.connection):
        cause = exc.__cause__ or exc.__context__
        detail = _one_line(str(cause)) if cause else "connection error"
        if _broke_midway(cause):  # an SDK that wraps a broken stream as a connection error
            return Failure(f"response stream{source} cut off ({detail})", retryable=True, network=True)
        return Failure(f"cannot connect{where} ({detail})", retryable=True, network=True)
    if isinstance(exc, errors.status):
        status = int(getattr(exc, "status_code", 0))
        response = getattr(exc, "response", None)
        reason = f"HTTP {status}: {_one_line(_provider_message(exc))}"
        if status == 401:
            reason += " (check the API key)"
        if status == 200:  # an error event inside a stream that had begun well: the provider failed on the way
            return Failure(f"error in the response stream: {_one_line(_provider_message(exc))}", retryable=True)
        retryable = status in RETRYABLE_STATUS or status >= 500
        after = retry_after_seconds(getattr(response, "headers", None)) if retryable else None
        return Failure(reason, retryable=retryable, retry_after=after)
    if errors.other is not None and isinstance(exc, errors.other):  # e.g. OpenAI's error event inside a stream
        return Failure(f"error in the response stream: {_one_line(_provider_message(exc))}", retryable=True)
    return None


async def _report(policy: RetryPolicy, attempt: int, exc: BaseException, delay: float) -> None:
    if policy.on_retry is None:
        return
    result = policy.on_retry(attempt, exc, delay)
    if inspect.isawaitable(result):
        await result


async def call_with_retries(
    call: Callable[[], Awaitable[T]], errors: SdkErrors, policy: RetryPolicy, provider: str
) -> T:
    """Await ``call()``, retrying transient provider errors; AgentError with a one-line reason when it gives up."""
    attempt = 0
    while True:
        attempt += 1
        try:
            return await call()
        except Exception as exc:  # sorted below; non-provider errors re-raised
            failure = classify(exc, errors)
            if failure is None:
                raise
            if not failure.retryable:
                raise AgentError(f"{provider}: {failure.reason}") from exc
            limit = policy.network_tries if failure.network else policy.max_tries
            if attempt >= limit:
                raise AgentError(f"{provider}: {failure.reason}; gave up after {attempt} tries") from exc
            delay = policy.backoff(attempt) if failure.retry_after is None else failure.retry_after
            if delay > policy.retry_after_max:
                raise AgentError(
                    f"{provider}: {failure.reason}; asked to wait {delay:.0f}s, more than {policy.retry_after_max:.0f}s"
                ) from exc
            await _report(policy, attempt, exc, delay)
            await asyncio.sleep(delay)
