"""The ``turns.idx`` sidecar: where each turn starts in a trace, written as the trace grows, read before any scan.

Format 2 (what ``TraceWriter`` writes): the line ``stripebench.trace-index/2``, then one 16-byte record per turn,
two little-endian signed 64-bit integers (turn number, byte offset of the turn's first event). Reading 25,000
turns is one ``array.frombytes`` instead of parsing 50,000 numbers out of text (a huge trace's first paint waits
for it: about 9 ms for format 1 against 2 ms). Format 1 (``stripebench.trace-index/1``, then a ``turn offset``
text line per turn), written by earlier versions, is still read.

Either way the index is only a hint: ``parse`` accepts it only if its turns strictly increase, and the reader
checks each offset against the trace before trusting it (``Trace.events_for_turn``).
"""

from __future__ import annotations

import bisect
import operator
import struct
import sys
from array import array
from itertools import islice

MAGIC_V1 = b"stripebench.trace-index/1"
MAGIC = b"stripebench.trace-index/2"
RECORD = struct.Struct("<qq")


def header() -> bytes:
    """What a new index file starts with."""
    return MAGIC + b"\n"


def record(turn: int, offset: int) -> bytes:
    """One turn's record."""
    return RECORD.pack(turn, offset)


class QuickTurns:
    """Turn numbers (strictly increasing) and where each starts."""

    __slots__ = ("turns", "starts")

    def __init__(self, turns: list[int], starts: list[int] | array) -> None:
        self.turns = turns
        self.starts = starts

    def offset_of(self, turn: int) -> int | None:
        """Where ``turn`` starts, or None if the index does not list it."""
        i = bisect.bisect_left(self.turns, turn)
        return self.starts[i] if i < len(self.turns) and self.turns[i] == turn else None


def parse(data: bytes) -> QuickTurns | None:
    """The index in ``data`` (format 2 or 1), or None if it is not one, lists no turn, or is out of order."""
    magic, _, body = data.partition(b"\n")
    turns: list[int]
    starts: list[int] | array[int]
    if magic == MAGIC:
        # a record cut short (the writer died mid-write) is left out; the reader then finds the index stale
        numbers = array("q")
        numbers.frombytes(body[: len(body) - len(body) % RECORD.size])
        if sys.byteorder == "big":
            numbers.byteswap()
        turns, starts = numbers[0::2].tolist(), numbers[1::2]
    elif magic == MAGIC_V1:
        fields = body.split()
        lines = body.count(b"\n") + (not body.endswith(b"\n"))
        if not fields or len(fields) != 2 * lines:
            return None  # a line without exactly two fields
        try:
            values = list(map(int, fields))
        except ValueError:
            return None
        turns, starts = values[0::2], values[1::2]
    else:
        return None
    if not turns or not _strictly_increasing(turns):
        return None  # no turns, or a turn started twice (events of several turns interleaved): no quick path
    return QuickTurns(turns, starts)


def _strictly_increasing(values: list[int]) -> bool:
    # each value below the next, compared in C (a quarter of building a set of 25,000 turns)
    return all(map(operator.lt, values, islice(values, 1, None)))
