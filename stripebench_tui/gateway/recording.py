"""The gateway's model recording: every upstream response of an episode, kept so the episode can be served again.

``ModelRecorder`` is the optional hook a ``Gateway`` hands each response to: the
raw bytes as they pass (chunk by chunk for a stream, the body otherwise) and the
exchange once it ended. It writes ``exchanges.jsonl`` in its directory (one line
per model exchange: protocol, path, status, whether it streamed, the digests of
the tool results and user text the request newly carried, and which complete
reply — turn — it was) and each response beside it as ``NNNN.sse`` or
``NNNN.json``, redacted like the trace (the provider key never appears; a secret
split across a stream's deltas too, see ``gateway.remap``). Bytes are
kept in memory until the response ended, so recording adds no file I/O to the
stream's path.

A ``RecordedUpstream`` (``gateway.recorded``) plugged into the same recorder
answers requests from an earlier recording; those exchanges are recorded again
(``"source": "recording"``), so a fork can itself be forked.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from stripebench_tui.core.episode_files import Refused, read_episode_file
from stripebench_tui.core.redact import Redactor
from stripebench_tui.gateway.remap import events_of, remap_body, remap_stream
from stripebench_tui.gateway.traffic import Exchange

EXCHANGES = "exchanges.jsonl"
EXCERPT = 300  # characters of each carried tool result kept (redacted) for divergence reports

Normalize = Callable[[str], str]  # what makes two runs' texts comparable (episode paths and ports, timings)


def digest(text: str, normalize: Normalize | None = None) -> str:
    """The digest a recording keeps of a carried text (after ``normalize``)."""
    return hashlib.sha256((normalize(text) if normalize else text).encode("utf-8", "surrogatepass")).hexdigest()[:32]


@dataclass
class Carried:
    """A tool result a request carried, as the recording keeps it."""

    call_id: str
    tool: str
    sha256: str
    is_error: bool = False
    excerpt: str = ""


@dataclass
class RecordedExchange:
    """One line of ``exchanges.jsonl`` (and where its response's bytes are)."""

    number: int
    protocol: str
    path: str
    stream: bool
    status: int
    content_type: str = ""
    retry_after: str = ""
    turn: int | None = None  # the how-manyth complete reply this was (None: an error, not a turn)
    cut: bool = False  # the response stopped before it was complete (a cut-off stream)
    error: str = ""
    body: str = ""  # sidecar file name
    source: str = "upstream"  # or "recording": served from an earlier recording
    carries: list[Carried] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)  # digests of new user text (kept for reference, not compared)
    raw: bytes = b""  # the sidecar's content once loaded

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k not in ("raw", "carries")}
        out["carries"] = [c.__dict__ for c in self.carries]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RecordedExchange:
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data and k not in ("raw", "carries")}
        return cls(**known, carries=[Carried(**c) for c in data.get("carries") or []])


def load_recording(directory: Path) -> list[RecordedExchange]:
    """The exchanges recorded in ``directory``, in order, with their responses' bytes; ValueError/OSError if unreadable.

    The recording comes with the episode, so every file it names is read through ``core.episode_files``: a body
    named ``../../etc/passwd`` (or a link out of ``directory``) is a ValueError, never served to the harness.
    """
    out: list[RecordedExchange] = []
    try:
        text = read_episode_file(directory, EXCHANGES).decode("utf-8")
    except Refused as exc:
        raise ValueError(str(exc)) from None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = RecordedExchange.from_dict(json.loads(line))
            item.raw = read_episode_file(directory, item.body) if item.body else b""
        except (ValueError, TypeError, Refused) as exc:
            raise ValueError(f"{directory / EXCHANGES}, line {number}: {exc}") from None
        out.append(item)
    return out


class ModelRecorder:
    """The gateway hook that records (see the module docstring); thread-safe."""

    def __init__(self, directory: Path, redactor: Redactor | None = None, normalize: Normalize | None = None) -> None:
        self.directory = Path(directory)
        self.redactor = redactor or Redactor()
        self.normalize = normalize
        self.replay: Any = None  # a RecordedUpstream answering from an earlier recording, if any
        self.turns = 0
        self._lock = threading.Lock()
        self._bytes: dict[int, tuple[bool, list[bytes]]] = {}
        self._served: set[int] = set()
        self._count = 0

    # ---- what the gateway calls ----

    async def answer(self, exchange: Exchange) -> httpx.Response | None:
        """The recorded response when a replay is serving this exchange, else None (forward it)."""
        if self.replay is None:
            return None
        response = await self.replay.answer(exchange)
        if response is not None:
            with self._lock:
                self._served.add(exchange.number)
        return response

    async def answer_other(self, method: str, path: str, body: bytes) -> httpx.Response | None:
        """A non-model request (count_tokens, …) answered by the replay while it serves, else None."""
        return None if self.replay is None else await self.replay.answer_other(method, path, body)

    def chunk(self, exchange: Exchange, data: bytes, stream: bool = False) -> None:
        """Bytes of ``exchange``'s response as they passed (``stream``: part of an event stream)."""
        with self._lock:
            self._bytes.setdefault(exchange.number, (stream, []))[1].append(data)

    def ended(self, exchange: Exchange) -> None:
        """The response ended (complete, failed or cut off): write its line and its bytes."""
        with self._lock:
            streamed, chunks = self._bytes.pop(exchange.number, (False, []))
            raw = b"".join(chunks)
            source = "recording" if exchange.number in self._served else "upstream"
            self._served.discard(exchange.number)
            complete = exchange.reply is not None and exchange.reply.complete and exchange.status == 200
            if complete:
                self.turns += 1
            self._count += 1
            name = f"{self._count:04d}.{'sse' if streamed else 'json'}" if raw else ""
            item = RecordedExchange(
                number=self._count, protocol=exchange.wire.name, path=exchange.path, stream=exchange.streaming,
                status=exchange.status, content_type="text/event-stream" if streamed else "application/json",
                retry_after=exchange.retry_after, turn=self.turns if complete else None,
                cut=exchange.status == 200 and not complete, error=self.redactor.text(exchange.error), body=name,
                source=source, carries=self.carried(exchange), texts=[digest(t, self.norm) for t in exchange.texts])
            self.directory.mkdir(parents=True, exist_ok=True)
            if name:
                (self.directory / name).write_bytes(self.redacted(raw, streamed))
            with open(self.directory / EXCHANGES, "a", encoding="utf-8") as out:
                out.write(json.dumps(item.to_dict()) + "\n")
        if source == "upstream" and self.replay is not None:
            self.replay.observe(exchange)

    # ---- helpers ----

    def redacted(self, raw: bytes, streamed: bool) -> bytes:
        """A response's bytes with secrets replaced, also those split across a stream's deltas."""
        if streamed:
            return b"".join(remap_stream(events_of(raw), self.redactor.text))
        return remap_body(raw, self.redactor.text)

    def norm(self, text: str) -> str:
        """``text`` redacted, then normalised: what digests are taken of."""
        text = self.redactor.text(text)
        return self.normalize(text) if self.normalize else text

    def carried(self, exchange: Exchange) -> list[Carried]:
        """The tool results ``exchange``'s request newly carried, as digests (and a redacted excerpt)."""
        return [Carried(r.call_id, r.tool, digest(r.output, self.norm), r.is_error, self.redactor.text(r.output)[:EXCERPT])
                for r in exchange.results]


__all__ = ["Carried", "EXCHANGES", "ModelRecorder", "RecordedExchange", "digest", "load_recording"]
