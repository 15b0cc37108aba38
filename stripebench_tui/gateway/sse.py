"""An incremental decoder for server-sent events, fed with whatever byte chunks the network delivers."""

from __future__ import annotations


class SseDecoder:
    """Feed raw bytes, get complete ``(event, data)`` pairs; ``event`` is "" when the stream names none."""

    def __init__(self) -> None:
        self._buffer = b""
        self._event = ""
        self._data: list[str] = []

    def feed(self, chunk: bytes) -> list[tuple[str, str]]:
        """Every event completed by ``chunk`` (a partial line waits for the next chunk)."""
        self._buffer += chunk
        out: list[tuple[str, str]] = []
        while True:
            cut = self._buffer.find(b"\n")
            if cut < 0:
                return out
            line = self._buffer[:cut].rstrip(b"\r").decode("utf-8", "replace")
            self._buffer = self._buffer[cut + 1 :]
            if not line:
                if self._data:
                    out.append((self._event, "\n".join(self._data)))
                self._event, self._data = "", []
            elif line.startswith(":"):
                continue  # a comment (keep-alive)
            else:
                name, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                if name == "event":
                    self._event = value
                elif name == "data":
                    self._data.append(value)
