"""A recording made ready for the HTML report: the cast packed inline, its turn markers, asciinema's player.

The report's script decodes the cast in the browser (base64, gzip: like the long outputs), plays it in the
player, seeks to a turn's marker when a link to that turn is clicked, and marks the turn being played. Every
output event is redacted again on the way in, so a cast made elsewhere cannot carry a key into the report.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stripebench_tui.core.redact import Redactor
from stripebench_tui.errors import BadFileError
from stripebench_tui.formats.cast import redact_drawn
from stripebench_tui.formats.player_assets import PlayerAssets, player_assets

_TURN_MARKER = re.compile(r"^turn (\d+)$")


@dataclass(frozen=True)
class EmbeddedRecording:
    """What the report template needs to play a recording."""

    packed: str  # the cast, gzipped, in base64
    cols: int
    rows: int
    duration: float
    markers: dict[int, float] = field(default_factory=dict)  # turn → seconds into the recording
    player: PlayerAssets | None = None

    @property
    def markers_json(self) -> str:
        """``[[seconds, turn], …]`` in time order, for the page's script."""
        return json.dumps(sorted([t, turn] for turn, t in self.markers.items()))


def read_recording(path: Path) -> tuple[dict[str, Any], list[list[object]]]:
    """(header, events) of an asciicast v2 file; ``BadFileError`` naming the line when it is not one."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise BadFileError(f"{path}: cannot read ({exc})") from None
    try:
        header = json.loads(lines[0]) if lines else None
    except json.JSONDecodeError:
        header = None
    if not isinstance(header, dict) or header.get("version") != 2 or not isinstance(header.get("width"), int):
        raise BadFileError(f"{path}: not an asciicast v2 recording (line 1 is not its header)")
    events: list[list[object]] = []
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            event = None
        if not (isinstance(event, list) and len(event) == 3 and isinstance(event[0], (int, float))
                and isinstance(event[1], str) and isinstance(event[2], str)):
            raise BadFileError(f"{path}:{number}: not an asciicast event [time, code, data]")
        events.append(event)
    return header, events


def embed_recording(path: Path, assets: PlayerAssets | None = None) -> EmbeddedRecording:
    """``path`` (an asciicast v2 file) packed for the report, redacted again, with the player's assets."""
    header, events = read_recording(path)
    redactor = Redactor()
    # The player's clock must stay the file's (the markers' times): no idle limit of the player's own.
    header = {k: v for k, v in redactor.value(header).items() if k != "idle_time_limit"}
    kept: list[list[object]] = []
    markers: dict[int, float] = {}
    for t, code, data in events:
        if code == "o":
            data = redact_drawn(str(data), redactor)[0]
        elif code == "m":
            m = _TURN_MARKER.match(str(data))
            if m:
                markers.setdefault(int(m.group(1)), float(t))  # type: ignore[arg-type]
        elif code != "r":
            continue  # input and other events: nothing a viewer needs
        kept.append([t, code, data])
    text = "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in [header, *kept])
    packed = base64.b64encode(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)).decode("ascii")
    duration = float(kept[-1][0]) if kept else 0.0  # type: ignore[arg-type]
    return EmbeddedRecording(packed=packed, cols=int(header["width"]), rows=int(header.get("height") or 24),
                             duration=duration, markers=markers, player=assets or player_assets())


__all__ = ["EmbeddedRecording", "embed_recording", "read_recording"]
