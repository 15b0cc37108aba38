"""A recorded upstream: the harness's model requests 1..N answered from an earlier episode's recording.

Plugged into a ``ModelRecorder`` (``gateway.recording``), it answers the model
requests of a harness restarted on a fresh environment, in order, with the
recorded responses' bytes (a stream streamed event by event, a recorded cut-off
cut off again, a recorded 429 with its Retry-After), until the exchange that
produced turn ``turns`` has been served. After that it answers nothing, so the
gateway forwards to its live upstream — or, with ``live=False``, it answers every
further request with a 503 saying the recording ended and calls ``on_end`` (the
episode then ends: a whole episode re-runs offline). Non-model requests
(``count_tokens``) are answered locally while the recording serves (estimated
from the body's size), so the live upstream sees nothing of turns 1..N.

Each request is compared with the recorded one before it is answered: the tool
results it newly carries (digests after redaction and normalisation) and what it
asks (path, streaming). The first difference goes to ``on_divergence``. A result
that differs does not stop the replay (the recorded turns are re-executed all the
same, as for our own agents); a request the recording cannot answer (another
path, streaming where the recording has none) ends the replayed part there.
New user text is not compared: harnesses put dates and session ids in it.
Once live, each live reply is compared with the recorded reply of the same turn
(text and tool calls by name and arguments, call ids aside) until the first
that differs: the fork's first divergence can be the live model answering
otherwise than the recorded one did.

The recorded episode's paths, ports and URLs in the responses (an absolute file
path in a tool call's arguments) are replaced by the new episode's (``mapping``,
recorded value -> new value), as the replay agent does for our own agents: in a
stream, the pieces of each delta are joined, mapped and sent in the first of
their events (the others carry ""), so a path split across events is mapped too;
events with nothing to map keep their recorded bytes.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx

from stripebench_tui.gateway.recording import EXCERPT, Carried, ModelRecorder, RecordedExchange
from stripebench_tui.gateway.remap import events_of, mapper, remap_body, remap_stream, walk
from stripebench_tui.gateway.sse import SseDecoder
from stripebench_tui.gateway.traffic import Exchange
from stripebench_tui.gateway.wire import ANTHROPIC, OPENAI_CHAT, Wire

ENDED = "stripebench replay: the recording ends here and there is no live upstream"

Divergence = Callable[[int, str, dict[str, Any]], None]  # (turn, one-line text, details)


def served_part(recording: list[RecordedExchange], turns: int | None) -> int:
    """How many recorded exchanges serve turns 1..``turns`` (None: all of them); ValueError past the last turn."""
    if turns is None:
        return len(recording)
    if turns == 0:
        return 0
    for index, item in enumerate(recording):
        if item.turn == turns:
            return index + 1
    last = max((r.turn or 0 for r in recording), default=0)
    raise ValueError(f"the recording has {last} turns; cannot serve turn {turns}")


class RecordedUpstream:
    """Answers from a recording (see the module docstring); its methods run on the gateway's thread."""

    def __init__(self, recording: list[RecordedExchange], turns: int | None = None, *, live: bool = True,
                 on_divergence: Divergence | None = None, on_end: Callable[[], None] | None = None,
                 on_replayed: Callable[[int], None] | None = None) -> None:
        self.recording = recording
        self.serve = served_part(recording, turns)
        self.live = live
        self.on_divergence = on_divergence
        self.on_end = on_end
        self.on_replayed = on_replayed  # the replayed part is over (called once, with the turns it served)
        self.recorder: ModelRecorder | None = None  # for the digests: the new episode's redaction and normalisation
        self.mapping: list[tuple[str, str]] = []  # recorded value -> new value, longest first
        self.next = 0  # index of the recorded exchange the next model request gets
        self.turns_served = 0
        self.diverged = False
        self.over = self.serve == 0
        self._past = False  # a request past the served part came
        self._live_turn: int | None = None  # the last live reply's turn, while live replies are compared
        self._lock = threading.Lock()

    @property
    def replaying(self) -> bool:
        """Whether requests are still answered from the recording."""
        return not self.over

    async def answer(self, exchange: Exchange) -> httpx.Response | None:
        """The recorded response for ``exchange``; None to forward it live; a 503 once the recording ended offline."""
        with self._lock:
            item = self.recording[self.next] if self.next < len(self.recording) else None
            if not self.over:
                assert item is not None  # (self.next < self.serve <= len(recording) while serving)
                self._compare(exchange, item)
                if self._answerable(exchange, item):
                    self.next += 1
                    self.turns_served = item.turn or self.turns_served
                    self.over = self.next >= self.serve
                    exchange.upstream = "recording"
                    return self._response(item)
                self.over = True
            elif not self._past:
                # The first request past the served part still carries re-executed results (of turn N's calls).
                if item is not None:
                    self._compare(exchange, item)
                else:  # the recorded harness stopped here
                    self._diverge(self.turns_served + 1, f"turn {self.turns_served + 1}: the harness asks for more than "
                                  f"the recording holds ({'live from here' if self.live else 'the episode ends'})",
                                  {"differs": ["request"]})
            self._past = True
        self.finish()
        if self.live:
            return None
        if self.on_end is not None:
            self.on_end()
        exchange.upstream = "recording"
        return _json(503, exchange.wire.error_body(503, ENDED))

    def observe(self, exchange: Exchange) -> None:
        """A live reply ended (the recorder calls this): compare it with the recorded reply of its turn."""
        reply = exchange.reply
        if not self.over or self.diverged or reply is None or not reply.complete or exchange.status != 200:
            return
        self._live_turn = (self._live_turn if self._live_turn is not None else self.turns_served) + 1
        item = next((r for r in self.recording if r.turn == self._live_turn), None)
        if item is None:
            return
        recorded = _recorded_reply(exchange.wire, item)
        text = mapper(self.mapping)(recorded.text)
        calls = [(c.name, walk(json.loads(json.dumps(c.arguments)), mapper(self.mapping), (), [])) for c in recorded.calls]
        what = [k for k, a, b in (("text", reply.text, text),
                                  ("tool calls", [(c.name, c.arguments) for c in reply.calls], calls)) if a != b]
        if what:
            names = ", ".join(c.name for c in reply.calls) or "no calls"
            self._diverge(self._live_turn, f"turn {self._live_turn}: the live model's reply differs from the recording "
                          f"({', '.join(what)})", {"differs": what, "new_text": reply.text[:EXCERPT], "recorded_text":
                          text[:EXCERPT], "new_calls": names, "recorded_calls": ", ".join(n for n, _ in calls) or "no calls"})

    def finish(self) -> None:
        """The replayed part is over (past it, or the harness ended): ``on_replayed`` once, with the turns it served."""
        with self._lock:
            done, self.on_replayed = self.on_replayed, None
        if done is not None:
            done(self.turns_served)

    async def answer_other(self, method: str, path: str, body: bytes) -> httpx.Response | None:
        """``count_tokens`` estimated while the recording serves (or always, offline); other paths 404 offline."""
        if self.live and self.over:
            return None
        if path.endswith("/count_tokens"):
            return _json(200, {"input_tokens": 10 + len(body) // 4})
        wire = ANTHROPIC if path.startswith("/v1/messages") else OPENAI_CHAT
        return _json(404, wire.error_body(404, f"stripebench replay: {method} {path} is not in the recording"))

    # ---- comparing ----

    def _answerable(self, exchange: Exchange, item: RecordedExchange) -> bool:
        if exchange.path == item.path and exchange.streaming == item.stream:
            return True
        asked = f"{exchange.path}{' (streaming)' if exchange.streaming else ''}"
        recorded = f"{item.path}{' (streaming)' if item.stream else ''}"
        self._diverge(self.turns_served + 1, f"turn {self.turns_served + 1}: the harness asks {asked}; the recording has "
                      f"{recorded} (it cannot answer: {'live from here' if self.live else 'the episode ends'})",
                      {"differs": ["request"], "asked": asked, "recorded": recorded, "exchange": item.number})
        return False

    def _compare(self, exchange: Exchange, item: RecordedExchange) -> None:
        new = self.recorder.carried(exchange) if self.recorder is not None else []
        old = {c.call_id: c for c in item.carries}
        turn = self.turns_served
        if [c.call_id for c in new] != list(old):
            self._diverge(turn, f"turn {turn}: the harness sent results for {_ids(new)}; the recording has {_ids(item.carries)}",
                          {"differs": ["calls"], "call_ids": [c.call_id for c in new], "recorded_call_ids": list(old)})
            return
        for c in new:
            was = old[c.call_id]
            what = [k for k, a, b in (("output", c.sha256, was.sha256), ("status", c.is_error, was.is_error)) if a != b]
            if what:
                self._diverge(turn, f"turn {turn}: {c.tool or was.tool} result differs from the recording ({', '.join(what)})",
                              {"call_id": c.call_id, "tool": c.tool or was.tool, "differs": what,
                               "recorded_output": was.excerpt, "new_output": c.excerpt})
                return

    def _diverge(self, turn: int, text: str, details: dict[str, Any]) -> None:
        if self.diverged:
            return
        self.diverged = True
        if self.on_divergence is not None:
            self.on_divergence(turn, text, details)

    def _response(self, item: RecordedExchange) -> httpx.Response:
        headers = {"content-type": item.content_type or "application/json"}
        if item.retry_after:
            headers["retry-after"] = item.retry_after
        if item.content_type == "text/event-stream":
            pieces = remap_stream(events_of(item.raw), mapper(self.mapping)) if self.mapping else events_of(item.raw)
            return httpx.Response(item.status, headers=headers, content=_stream(pieces, item.cut))
        return httpx.Response(item.status, headers=headers, content=remap_body(item.raw, mapper(self.mapping)))


def _recorded_reply(wire: Wire, item: RecordedExchange) -> Any:
    """The ``Reply`` a recorded response carried, parsed as the gateway parses a live one."""
    if item.content_type != "text/event-stream":
        try:
            return wire.reply(json.loads(item.raw))
        except (ValueError, AttributeError, TypeError):
            return wire.stream().end()
    parser = wire.stream()
    for event, data in SseDecoder().feed(item.raw + b"\n\n"):
        parser.feed(event, data)
    return parser.end()


async def _stream(pieces: list[bytes], cut: bool) -> AsyncIterator[bytes]:
    for piece in pieces:
        yield piece
        await asyncio.sleep(0)  # each event its own write, as it came
    if cut:
        raise httpx.RemoteProtocolError("the recorded stream was cut off here")


def _json(status: int, body: dict[str, Any]) -> httpx.Response:
    return httpx.Response(status, headers={"content-type": "application/json"}, content=json.dumps(body).encode())


def _ids(items: list[Carried]) -> str:
    return ", ".join(c.call_id for c in items) or "no calls"


__all__ = ["ENDED", "RecordedUpstream", "served_part"]
