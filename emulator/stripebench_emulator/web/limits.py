"""What one request may take before the app sees it: the size of its head and target, and how long it may take.

uvicorn's httptools protocol (the fast one this package serves with) caps none of these: it buffers a header of any
size (a 256 MB header was answered 200, with 276 MB more RSS; 64 MB took 34 s and 131 MB here), answers a request target
over 65,535 bytes with a plain-text 400 (``httptools.parse_url`` keeps 16-bit offsets), and arms no timer until a first
response is sent, so a client that trickles its head holds the connection for ever. uvicorn's
``h11_max_incomplete_event_size`` applies to its h11 protocol only, ``limit_concurrency`` answers 503 to everyone once
reached, and ``timeout_keep_alive`` starts after a response. So ``GuardedHTTP`` stands in front of uvicorn's protocol,
through asyncio's public ``Protocol`` interface only: it reads along with an ``httptools`` parser of its own (whose
callbacks count the target's bytes and mark where each message's head ends and the message ends; a head's bytes are
counted from the chunks it spans), refuses before forwarding a byte too many, and times each request's reading. Its
refusals are Stripe-shaped JSON (``{"error": {"type": "invalid_request_error", ...}}``, 431, 414 or 400) written
straight to the connection, which is then half-closed and closed (what it had sent is read and dropped meanwhile, so the
client is not reset before it reads the answer); a request that takes too long to arrive gets its connection closed.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, cast

import httptools
from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

# The request line and header fields together (a Stripe SDK's are under 2 KB; Node's default cap is 16 KiB).
MAX_HEAD_BYTES = 64 * 1024
# The request target (path and query): under httptools.parse_url's 65,535 bytes, far above any list call's query.
MAX_TARGET_BYTES = 32 * 1024
# Seconds a client has to send a whole request (line, headers, body) once its first byte comes, and its first
# request once connected. Between requests, uvicorn's keep-alive timeout (5 s) closes an idle connection.
REQUEST_TIMEOUT = 10.0
# How long a refused connection is drained (its unread bytes dropped) before it is closed.
_LINGER_SECONDS = 2.0
# The latest time the clock may be set to: 3000-01-01T00:00:00Z, centuries of billing periods short of the calendar's
# end (datetime stops at the year 9999), and far inside int64.
MAX_CLOCK = 32503680000
_PHRASES = {400: "Bad Request", 414: "URI Too Long", 431: "Request Header Fields Too Large"}


def refusal(status: int, message: str) -> bytes:
    """A whole HTTP/1.1 response in Stripe's error shape that closes the connection."""
    body = json.dumps({"error": {"type": "invalid_request_error", "message": message}}).encode()
    head = (f"HTTP/1.1 {status} {_PHRASES[status]}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n")
    return head.encode("latin-1") + body


class _Refused(Exception):
    """Raised from a parser callback to stop parsing: the request is refused with ``status``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


class GuardedHTTP(asyncio.Protocol):
    """uvicorn's httptools protocol with caps on head and target bytes and a request read timeout.

    ``guarded_protocol(timeout)`` makes the class to give ``uvicorn.Config(http=...)``. Per request it costs four
    parser callbacks and no timer: the timer runs per connection and looks at the current request's deadline.
    """

    request_timeout: float = REQUEST_TIMEOUT

    def __init__(self, config: Config, server_state: ServerState, app_state: dict[str, Any],
                 _loop: asyncio.AbstractEventLoop | None = None) -> None:  # uvicorn passes its loop as ``_loop``
        self.inner = HttpToolsProtocol(config=config, server_state=server_state, app_state=app_state)
        self.loop = _loop or asyncio.get_event_loop()
        self.parser = httptools.HttpRequestParser(self)
        try:  # the same leniency uvicorn gives its parser, so both read the same messages
            self.parser.set_dangerous_leniencies(lenient_data_after_close=True)
        except AttributeError:  # pragma: no cover - httptools < 0.6.3
            pass
        self.transport: asyncio.Transport | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.deadline: float | None = None  # by when the request being read must be whole; None between requests
        self.state = "reading"  # "reading" (tracked), "passing" (after an Upgrade: uvicorn's alone), "refused"
        self.in_message = self.in_head = self.began = self.head_done = False
        self.head_seen = 0  # bytes of the current head known so far (whole chunks of it, and its first chunk)
        self.target_bytes = 0
        self.tail = b""  # the last bytes of a chunk that ended inside a head (a blank line may straddle chunks)

    # asyncio.Protocol: each event goes to uvicorn's protocol unless the guard has refused the connection

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's transports do not subclass asyncio's
        self.inner.connection_made(self.transport)
        self.deadline = self.loop.time() + self.request_timeout  # the first request, from the connection's start
        self.timer = self.loop.call_later(self.request_timeout, self._check_deadline)

    def data_received(self, data: bytes) -> None:
        if self.state != "reading":
            if self.state == "passing":
                self.inner.data_received(data)
            return  # refused: drained
        idle_before, head_before = not self.in_message, self.in_head
        self.began = self.head_done = False
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            # uvicorn's protocol answers it as a plain request (the server runs with ws="none": the emulator serves
            # no WebSocket); whatever follows is uvicorn's to refuse, and gets one more request's time at most
            self.state = "passing"
            self.deadline = self.loop.time() + self.request_timeout
            if self.timer is None:
                self.timer = self.loop.call_later(self.request_timeout, self._check_deadline)
        except httptools.HttpParserError as exc:
            refused = exc.__context__ if isinstance(exc.__context__, _Refused) else None
            if refused is not None:
                self._refuse(refused.status, refused.message)
            else:
                self._refuse(400, f"Invalid HTTP request: {exc}.")
            return
        if (self.in_head or self.head_done) and (self.in_head or not idle_before or len(data) > MAX_HEAD_BYTES) \
                and self._head_size(data, idle_before, head_before) > MAX_HEAD_BYTES:  # (usual: one head, in a chunk)
            self._refuse(431, f"The request's headers are too large: at most {MAX_HEAD_BYTES:,} bytes of request "
                              "line and headers are accepted.")
            return
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        if self.state == "refused":
            return None  # the client is done: close
        self.inner.eof_received()  # uvicorn's answers None: close
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()

    # httptools callbacks (our own parser's)

    def on_message_begin(self) -> None:
        self.in_message = self.in_head = self.began = True
        self.target_bytes = 0
        if self.deadline is None:
            self.deadline = self.loop.time() + self.request_timeout
            if self.timer is None:
                self.timer = self.loop.call_later(self.request_timeout, self._check_deadline)

    def on_url(self, url: bytes) -> None:  # called per piece as the target arrives
        self.target_bytes += len(url)
        if self.target_bytes > MAX_TARGET_BYTES:
            raise _Refused(414, f"The request URL is too long: at most {MAX_TARGET_BYTES:,} bytes of path and query "
                                "are accepted.")

    def on_headers_complete(self) -> None:
        self.in_head, self.head_done = False, True

    def on_message_complete(self) -> None:
        self.in_message = False
        self.deadline = None

    # the guard's own doings

    def _head_size(self, data: bytes, idle_before: bool, head_before: bool) -> int:
        """The current head's bytes (a lower bound where a chunk holds more than one message: never more than
        it has), once this chunk has been parsed; keeps what the next chunk needs."""
        if head_before:  # the head went on from earlier chunks
            if self.head_done and not self.began:  # ... and ends in this one, at its first blank line
                end = (self.tail + data).find(b"\r\n\r\n") + 4 - len(self.tail)
                size, self.head_seen, self.tail = self.head_seen + end, 0, b""
                return size
            if not self.began:  # ... and goes on after it
                self.head_seen += len(data)
                self.tail = data[-3:]
                return self.head_seen
        elif idle_before and self.began:  # a head began at this chunk's start (after any empty lines)
            if self.head_done:  # ... and ends in it
                end = data.find(b"\r\n\r\n")
                return max(end + 4 - _leading_blank(data), 0)
            self.head_seen, self.tail = len(data) - _leading_blank(data), data[-3:]
            return self.head_seen
        # more than one message in this chunk (pipelined): count from the next chunk on
        self.head_seen, self.tail = 0, (data[-3:] if self.in_head else b"")
        return 0

    def _check_deadline(self) -> None:
        self.timer = None
        transport = self.transport
        if self.deadline is None or transport is None or transport.is_closing():
            return  # between requests (uvicorn's keep-alive timeout watches those) or gone
        left = self.deadline - self.loop.time()
        if left > 0:
            self.timer = self.loop.call_later(left, self._check_deadline)
        elif not transport.is_reading():  # uvicorn paused reading (busy with an earlier request): not the client
            self.deadline = self.loop.time() + self.request_timeout
            self.timer = self.loop.call_later(self.request_timeout, self._check_deadline)
        else:
            transport.close()

    def _refuse(self, status: int, message: str) -> None:
        self.state = "refused"
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        transport.write(refusal(status, message))
        if transport.can_write_eof():
            transport.write_eof()  # the answer, then FIN; the client's unread bytes are dropped until it closes
            self.timer = self.loop.call_later(_LINGER_SECONDS, transport.close)
        else:  # pragma: no cover - every TCP transport can
            transport.close()


def _leading_blank(data: bytes) -> int:
    """How many CR and LF bytes start ``data`` (the parser skips them before a request line)."""
    count = 0
    while data[count:count + 1] in (b"\r", b"\n"):
        count += 1
    return count


def guarded_protocol(request_timeout: float = REQUEST_TIMEOUT) -> type[GuardedHTTP]:
    """The protocol class for ``uvicorn.Config(http=...)``, reading each request within ``request_timeout`` s."""
    if not 0 < request_timeout <= 3600:
        raise ValueError("the request timeout must be more than 0 and at most 3600 seconds")
    return type("GuardedHTTP", (GuardedHTTP,), {"request_timeout": float(request_timeout)})
