"""What one request/response through the gateway carried, and the bookkeeping across requests.

``Traffic`` remembers which user-side items (tool results, user text) earlier
requests already carried, so a harness that resends its whole history each turn
is recorded once, and which tool calls are still owed a result, so a result is
matched to its call by id and timed from the response that asked for it. A
``Tap`` sees every model exchange before it is forwarded (it may hold it, or add
an operator's note) and after the response ended.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from stripebench_tui.gateway.wire import Reply, Wire


@dataclass
class ObservedResult:
    """A tool result the harness sent back, matched to the call it answers."""

    call_id: str
    tool: str
    output: str
    is_error: bool = False
    duration: float = 0.0


@dataclass
class Exchange:
    """One model request through the gateway and, once it ended, its reply."""

    wire: Wire
    body: dict[str, Any]
    path: str
    number: int
    results: list[ObservedResult] = field(default_factory=list)  # new in this request
    texts: list[str] = field(default_factory=list)  # new user text in this request
    injected: list[str] = field(default_factory=list)
    reply: Reply | None = None
    status: int = 0
    error: str = ""  # why there is no complete reply (upstream status, cut-off stream, unreachable)
    ttft: float | None = None  # seconds from forwarding to the first token (streams only)
    latency: float | None = None  # seconds from forwarding to the end of the response
    retry_after: str = ""
    upstream: str = ""  # scheme://host:port it was forwarded to (never a key)

    @property
    def streaming(self) -> bool:
        return bool(self.body.get("stream"))

    def inject(self, text: str) -> None:
        """Append ``text`` to the request as a user message in the provider's format."""
        self.body = self.wire.append_user(self.body, text)
        self.injected.append(text)


class Tap(Protocol):
    """Sees model exchanges: ``before`` may hold the request or change it; ``after`` gets the outcome."""

    async def before(self, exchange: Exchange) -> None: ...

    def after(self, exchange: Exchange) -> None: ...


class PassThrough:
    """A tap that only forwards."""

    async def before(self, exchange: Exchange) -> None:
        return None

    def after(self, exchange: Exchange) -> None:
        return None


class Traffic:
    """Deduplication of repeated history and matching of tool results to calls, across one harness's requests."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.requests = 0
        self._seen: set[str] = set()
        self._owed: dict[str, tuple[str, float]] = {}  # call id -> (tool, when the response asking for it ended)
        self._answered: set[str] = set()

    def arrived(self, wire: Wire, body: dict[str, Any], path: str) -> Exchange:
        """A new request: its exchange with only the items no earlier request carried."""
        self.requests += 1
        exchange = Exchange(wire, body, path, self.requests)
        now = self.clock()
        for item in wire.incoming(body):
            if item.key in self._seen:
                continue
            self._seen.add(item.key)
            if item.call_id:
                if item.call_id in self._answered:
                    continue
                tool, asked = self._owed.pop(item.call_id, ("", now))
                self._answered.add(item.call_id)
                exchange.results.append(ObservedResult(item.call_id, tool, item.text, item.is_error, max(0.0, now - asked)))
            else:
                exchange.texts.append(item.text)
        return exchange

    def replied(self, exchange: Exchange) -> None:
        """The response ended: its tool calls are now owed results."""
        now = self.clock()
        for call in exchange.reply.calls if exchange.reply else []:
            if call.call_id:
                self._owed[call.call_id] = (call.name, now)

    @property
    def owed(self) -> list[str]:
        """Call ids still waiting for a result."""
        return list(self._owed)


__all__ = ["Exchange", "ObservedResult", "PassThrough", "Tap", "Traffic"]
