"""Reading a recording back as a viewer would see it: asciinema's own parser, then pyte's terminal emulator."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyte
from asciinema.asciicast import v2


@dataclass
class Frame:
    """The screen after one output event."""

    t: float
    lines: list[str]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def read_cast(path: Path) -> tuple[dict[str, Any], list[list[Any]]]:
    """(header, events) through asciinema's asciicast v2 reader (it refuses anything that is not v2)."""
    with open(path, encoding="utf-8") as f:
        first = f.readline()
        with v2.open_from_file(first, f) as cast:
            return cast.v2_header, list(cast.events())


def frames(path: Path) -> Iterator[Frame]:
    """Every screen the recording shows, in order, as pyte renders it."""
    header, events = read_cast(path)
    screen = pyte.Screen(header["width"], header["height"])
    stream = pyte.Stream(screen)
    for t, kind, data in events:
        if kind == "o":
            stream.feed(data)
            yield Frame(t, list(screen.display))


def all_text(path: Path) -> str:
    """Every output event's data, joined: what a GIF renderer or a player draws."""
    return "".join(data for _, kind, data in read_cast(path)[1] if kind == "o")
