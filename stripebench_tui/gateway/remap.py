"""Rewriting the text a recorded model response carries (redaction, recorded paths to new ones) without breaking it.

A streamed reply sends its text and tool-call arguments in pieces, one delta per
event, and a secret or a path may be split across them. ``remap_stream`` joins
the pieces of each delta (per event type, block index and JSON path: Anthropic's
``delta.partial_json``/``delta.text``, OpenAI's ``choices[i].delta…``, Responses'
``delta``), applies the function to the whole, and sends the result in the first
of their events (the others carry ""); every other string is rewritten where it
is. Events with nothing to change keep their bytes as they were.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from stripebench_tui.core.json_value import JSONValue
from stripebench_tui.core.substitute import replacer

Rewrite = Callable[[str], str]
_Delta = tuple[tuple[Any, ...], Any, Any]  # (JSON path, the dict holding the string, its key)


def mapper(mapping: list[tuple[str, str]]) -> Rewrite:
    """A rewrite replacing each ``old`` by its ``new`` in one pass (``core.substitute.replacer``)."""
    return replacer(mapping)


def events_of(raw: bytes) -> list[bytes]:
    """An event stream split after each event (blank line), so it can be sent event by event."""
    out, start = [], 0
    while True:
        cut = raw.find(b"\n\n", start)
        if cut < 0:
            break
        out.append(raw[start:cut + 2])
        start = cut + 2
    if start < len(raw):
        out.append(raw[start:])
    return out


def walk(value: JSONValue, rewrite: Rewrite, path: tuple[Any, ...], deltas: list[_Delta]) -> Any:
    """``value`` with every string rewritten, except those under a ``delta`` key: collected in ``deltas`` instead."""
    if isinstance(value, str):
        return value if "delta" in path else rewrite(value)
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, str) and "delta" in (*path, key):
                deltas.append(((*path, key), value, key))
            else:
                value[key] = walk(item, rewrite, (*path, key), deltas)
        return value
    if isinstance(value, list):
        for i, item in enumerate(value):
            # list entries are told apart by their own index (OpenAI's choices and tool_calls), else their position
            mark = item.get("index", i) if isinstance(item, dict) else i
            value[i] = walk(item, rewrite, (*path, f"[{mark}]"), deltas)
        return value
    return value


def remap_body(raw: bytes, rewrite: Rewrite) -> bytes:
    """A JSON body with its strings rewritten (the same bytes when nothing changes, or it is not JSON)."""
    text = raw.decode("utf-8", "replace")
    if rewrite(text) == text:
        return raw
    try:
        return json.dumps(walk(json.loads(text), rewrite, (), [])).encode()
    except ValueError:
        return rewrite(text).encode()


def remap_stream(pieces: list[bytes], rewrite: Rewrite) -> list[bytes]:
    """SSE events with their text rewritten, the deltas of each block joined first (see the module docstring)."""
    events: list[tuple[str, Any] | None] = []
    groups: dict[tuple[Any, ...], list[tuple[int, Any, Any]]] = {}
    for number, piece in enumerate(pieces):
        name, data = _event(piece)
        if data is None:
            events.append(None)
            continue
        deltas: list[_Delta] = []
        walk(data, rewrite, (), deltas)
        ids = tuple(data.get(k) for k in ("index", "output_index", "content_index", "item_id")) if isinstance(data, dict) else ()
        for path, holder, key in deltas:
            groups.setdefault((name, ids, path), []).append((number, holder, key))
        events.append((name, data))
    changed: set[int] = set()
    for members in groups.values():
        joined = "".join(holder[key] for _, holder, key in members)
        done = rewrite(joined)
        if done != joined:
            for i, (number, holder, key) in enumerate(members):
                holder[key] = done if i == 0 else ""
                changed.add(number)
    out = []
    for number, piece in enumerate(pieces):
        event, text = events[number], piece.decode("utf-8", "replace")
        if event is None:
            out.append(piece if rewrite(text) == text else rewrite(text).encode())
        elif number not in changed and rewrite(text) == text:
            out.append(piece)
        else:
            name, data = event
            out.append((f"event: {name}\n" if name else "").encode() + b"data: " + json.dumps(data).encode() + b"\n\n")
    return out


def _event(piece: bytes) -> tuple[str, Any]:
    """The event name and JSON data of one SSE event (data None when it is not JSON, e.g. ``[DONE]``)."""
    name, lines = "", []
    for line in piece.decode("utf-8", "replace").splitlines():
        if line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            lines.append(line[5:].lstrip())
    try:
        return name, json.loads("\n".join(lines)) if lines else None
    except ValueError:
        return name, None


__all__ = ["events_of", "mapper", "remap_body", "remap_stream", "walk"]
