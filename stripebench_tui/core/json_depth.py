"""JSON nested deeper than any file of ours needs is refused before it is decoded.

Python's decoder recurses once per level and raises ``RecursionError`` near a thousand levels (and code that walks
a decoded value recurses again), so a line of ``[[[[…`` in a trace or an ATIF file would be a traceback. A value
nested more than ``MAX_DEPTH`` levels is refused with ``TooDeep`` (a ``ValueError``) instead; the check costs two
``bytes.count`` calls on an ordinary line and one C-speed pass on a line with more brackets than the limit.
"""

from __future__ import annotations

import json
from itertools import accumulate
from typing import Any

MAX_DEPTH = 256  # levels of arrays and objects; a trace's events use fewer than twenty

_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


class TooDeep(ValueError):
    """A JSON text nested deeper than the limit; the message says how deep it goes."""


def depth(raw: bytes) -> int:
    """How deeply the arrays and objects of the JSON text ``raw`` nest (brackets inside strings not counted)."""
    unescaped = raw.replace(b"\\\\", b"").replace(b'\\"', b"")  # a backslash only ever escapes, inside strings
    outside = b"".join(unescaped.split(b'"')[::2])  # what lies between the strings
    brackets = outside.translate(None, _BRACKETS)
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


def check_depth(raw: bytes | str, limit: int = MAX_DEPTH) -> None:
    """``TooDeep`` when ``raw`` nests more than ``limit`` levels."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if data.count(b"[") + data.count(b"{") <= limit:
        return  # it cannot be deeper than its number of openings
    found = depth(data)
    if found > limit:
        raise TooDeep(f"JSON nested {found} levels deep (more than {limit})")


def loads(raw: bytes | str, limit: int = MAX_DEPTH) -> Any:
    """``json.loads`` after ``check_depth`` (bytes are decoded as UTF-8, never guessed); ``TooDeep``,
    ``UnicodeDecodeError`` or ``json.JSONDecodeError``, all ``ValueError``."""
    check_depth(raw, limit)
    try:
        return json.loads(raw.decode("utf-8") if isinstance(raw, bytes) else raw)
    except RecursionError:  # deeper than the stack has room for here, though under the limit
        raise TooDeep(f"JSON nested too deeply to decode (more than the {limit} levels allowed)") from None


__all__ = ["MAX_DEPTH", "TooDeep", "check_depth", "depth", "loads"]
