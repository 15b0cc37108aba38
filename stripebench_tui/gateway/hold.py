"""Holding a model response at the gateway until the operator has decided on its tool calls.

With a ``Holds`` given to the gateway, a response carrying a call whose tool
``needs`` approval is held before the harness sees that call: a stream passes
through event by event up to the event that begins such a call (the text before
it reaches the harness at once), the rest is kept; a JSON reply is kept whole.
Once the response is complete, ``review`` announces it (``on_held``) and waits for
a decision on every held call (``decide``, from any thread). Approve sends the
original bytes; edit sends the call with new arguments; reject sends a stand-in
call the harness answers without doing anything (by default a call of a tool it
does not have, which harnesses answer with an error result and go on), and the
harness's next requests are restored: the model sees its original call and a
result saying it was rejected and why. A response with no held call, or any
response without a ``Holds``, streams through untouched.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from stripebench_tui.core import operator as op
from stripebench_tui.gateway.rewrite import Change, Original, StreamRewriter, encode, restore, rewrite_reply, starts_call
from stripebench_tui.gateway.sse import SseDecoder
from stripebench_tui.gateway.traffic import Exchange
from stripebench_tui.gateway.wire import Call, Wire

STAND_IN = "stripebench_rejected_call"

# (the rejected call, the operator's reason) -> (tool name, arguments) of the call the harness is given instead
StandIn = Callable[[Call, str], tuple[str, dict[str, Any]]]


def unknown_tool(call: Call, reason: str) -> tuple[str, dict[str, Any]]:
    """The generic stand-in: a tool no harness has, so it answers with an error result and sends its next request."""
    return STAND_IN, {"rejected_tool": call.name, "reason": reason or "rejected by the operator"}


@dataclass
class _Review:
    loop: asyncio.AbstractEventLoop
    calls: dict[str, Call]
    decided: asyncio.Future[None]
    decisions: dict[str, op.Command] = field(default_factory=dict)


class Holds:
    """Which calls hold a response, the operator's decisions on them, and the history a rejection restores."""

    def __init__(self, needs: Callable[[str], bool], stand_in: StandIn = unknown_tool,
                 on_held: Callable[[Exchange], object] | None = None) -> None:
        self.needs = needs
        self.stand_in = stand_in
        self.on_held = on_held
        self.originals: dict[str, Original] = {}  # rejected call id -> what the model asked for, and its result
        self._lock = threading.Lock()
        self._reviews: dict[str, _Review] = {}  # held call id -> its response's review

    @property
    def waiting(self) -> list[str]:
        """Ids of held calls still waiting for a decision."""
        with self._lock:
            return [call_id for call_id, review in self._reviews.items() if call_id not in review.decisions]

    async def review(self, exchange: Exchange) -> dict[str, Change]:
        """Wait for a decision on each held call of the (complete) reply; the changes to make ({} sends it as is)."""
        reply = exchange.reply
        held = {c.call_id: c for c in (reply.calls if reply else []) if self.needs(c.name)}
        if not held:
            return {}
        loop = asyncio.get_running_loop()
        review = _Review(loop, held, loop.create_future())
        with self._lock:
            self._reviews.update(dict.fromkeys(held, review))
        if self.on_held is not None:
            self.on_held(exchange)
        try:
            await review.decided
        finally:
            with self._lock:
                for call_id in held:
                    self._reviews.pop(call_id, None)
        changes: dict[str, Change] = {}
        for call_id, decision in review.decisions.items():
            call = held[call_id]
            if isinstance(decision, op.Edit):
                changes[call_id] = Change(dict(decision.arguments))
                call.arguments = dict(decision.arguments)  # what the trace and a recorder see is what the harness runs
            elif isinstance(decision, op.Reject):
                name, arguments = self.stand_in(call, decision.reason)
                changes[call_id] = Change(arguments, name)
                self.originals[call_id] = Original(call.name, dict(call.arguments), op.rejection_text(decision.reason))
        return changes

    def decide(self, call_id: str, decision: op.Command) -> bool:
        """Record the operator's Approve/Edit/Reject for a held call; False when no such call is held."""
        with self._lock:
            review = self._reviews.get(call_id)
            if review is None or call_id in review.decisions:
                return False
            review.decisions[call_id] = decision
            complete = len(review.decisions) == len(review.calls)
        if complete and not review.loop.is_closed():
            review.loop.call_soon_threadsafe(_settle, review.decided)
        return True

    def release_all(self) -> None:
        """Approve every held call (the episode is ending)."""
        for call_id in self.waiting:
            self.decide(call_id, op.Approve(call_id=call_id))

    def restore(self, wire: Wire, body: dict[str, Any]) -> dict[str, Any]:
        """A request's body with rejected calls as the model asked for them and their results saying why."""
        return restore(wire, body, self.originals)


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


async def hold_reply(holds: Holds, exchange: Exchange, data: bytes) -> bytes:
    """A JSON reply after the operator's decisions (the same bytes when nothing changed)."""
    changes = await holds.review(exchange)
    if not changes:
        return data
    return orjson.dumps(rewrite_reply(exchange.wire, orjson.loads(data), changes))


def _event_end(buffer: bytes) -> int:
    """Where the first complete server-sent event in ``buffer`` ends (after its blank line), or -1."""
    ends = [i + len(sep) for sep in (b"\n\n", b"\r\n\r\n") if (i := buffer.find(sep)) >= 0]
    return min(ends) if ends else -1


# Cheap tests before parsing an event: only these can begin a tool call.
_CALL_MARKERS = (b'"tool_use"', b'"tool_calls"', b'"function_call"')


class HeldStream:
    """Passes a stream's events through until one begins a held call; keeps the rest until ``finish``."""

    def __init__(self, wire: Wire, holds: Holds) -> None:
        self.wire, self.holds = wire, holds
        self.holding = False
        self._buffer = b""
        self._kept: list[bytes] = []

    def feed(self, chunk: bytes) -> bytes:
        """The bytes to send now for ``chunk`` (whole events before the first held call)."""
        if self.holding:
            self._kept.append(chunk)
            return b""
        self._buffer += chunk
        out = []
        while not self.holding and (cut := _event_end(self._buffer)) >= 0:
            raw, self._buffer = self._buffer[:cut], self._buffer[cut:]
            if any(marker in raw for marker in _CALL_MARKERS) and self._begins_held_call(raw):
                self.holding = True
                self._kept.append(raw)
            else:
                out.append(raw)
        if self.holding and self._buffer:
            self._kept.append(self._buffer)
            self._buffer = b""
        return b"".join(out)

    def _begins_held_call(self, raw: bytes) -> bool:
        for _, data in SseDecoder().feed(raw if raw.endswith(b"\n\n") else raw + b"\n\n"):
            try:
                parsed = orjson.loads(data)
            except orjson.JSONDecodeError:
                continue
            name = starts_call(self.wire, parsed) if isinstance(parsed, dict) else ""
            if name and self.holds.needs(name):
                return True
        return False

    async def finish(self, exchange: Exchange) -> bytes:
        """The rest of the stream once the reply is complete: after the operator's decisions when it was held."""
        if not self.holding:
            return self._buffer
        raw = b"".join(self._kept)
        if exchange.reply is None or not exchange.reply.complete:
            return raw  # an unfinished reply is no turn: it goes on as the upstream sent it
        changes = await self.holds.review(exchange)
        if not changes:
            return raw
        rewriter = StreamRewriter(self.wire, changes)
        events: list[tuple[str, dict[str, Any] | str]] = []
        for name, data in SseDecoder().feed(raw + b"\n\n"):
            try:
                parsed = orjson.loads(data)
            except orjson.JSONDecodeError:
                events.append((name, data))  # [DONE]
                continue
            for new in rewriter.rewrite(parsed) if isinstance(parsed, dict) else [parsed]:
                events.append((str(new.get("type") or name) if name and isinstance(new, dict) else name, new))
        return encode(iter(events))


__all__ = ["HeldStream", "Holds", "STAND_IN", "StandIn", "hold_reply", "unknown_tool"]
