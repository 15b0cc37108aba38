"""A live episode as an event source: the bus's events, kept in memory and reduced as they arrive.

``LiveSource`` is a bus subscriber (pass it in ``Episode(..., subscribers=[source])``)
and an ``EpisodeSource`` for the episode screen. Its ``state`` is the reducer over
every event seen so far; ``version`` grows with each event so the screen can redraw
at its own pace (bursts are coalesced into one redraw). Handlers run on the app's
event loop, so nothing here needs a lock.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Iterable

from stripebench_tui.core.events import Event, Header, ToolResult, event_from_dict
from stripebench_tui.core.redact import Redactor
from stripebench_tui.core.state import EpisodeState, Reducer
from stripebench_tui.tui.source import EventListSource


class LiveSource(EventListSource):
    """Events of a running episode, as they are published."""

    live = True

    def __init__(self) -> None:
        super().__init__(())
        self.reducer = Reducer()
        self.version = 0
        self.trace_dir: Path | None = None  # where screenshots and sidecars are (relative paths resolve here)
        self.last_image: tuple[int, str] | None = None  # (turn, path relative to the trace dir) of the newest image
        self.redactor = Redactor()

    def add_secrets(self, secrets: Iterable[str]) -> None:
        """The episode's keys: redacted from what is shown, as they are in the trace."""
        for secret in secrets:
            self.redactor.add_secret(secret)

    def read_header(self, trace_path: Path) -> None:
        """Take the header from line 1 of the trace being written (the header is not published on the bus)."""
        if self.header is not None:
            return
        try:
            with open(trace_path, encoding="utf-8") as f:
                line = f.readline()
            header = event_from_dict(json.loads(line))
        except (OSError, ValueError):
            return
        if isinstance(header, Header):
            self(header)

    @property
    def state(self) -> EpisodeState:
        """The episode so far (mutated in place as events arrive)."""
        return self.reducer.state

    def __call__(self, ev: Event) -> None:
        """Bus handler: keep the event (redacted) and fold it into the state."""
        if not isinstance(ev, Header):
            # A copy: other subscribers (the recorder) get the event as published.
            ev = dataclasses.replace(ev, **{f.name: self.redactor.value(getattr(ev, f.name)) for f in dataclasses.fields(ev)
                                            if f.name not in ("seq", "t", "turn")})
        self.append(ev)
        if isinstance(ev, Header):
            self.reducer.apply(ev)
            extra = ev.extra if isinstance(ev.extra, dict) else {}
            if extra.get("episode_dir"):
                self.trace_dir = Path(str(extra["episode_dir"]))
        else:
            self.reducer.apply(ev)
            if isinstance(ev, ToolResult) and ev.images:
                self.last_image = (ev.turn, ev.images[-1])
        self.version += 1

    def image_path(self) -> Path | None:
        """The newest screenshot as a path on disk, if any."""
        if self.last_image is None:
            return None
        path = Path(self.last_image[1])
        if not path.is_absolute() and self.trace_dir is not None:
            path = self.trace_dir / path
        return path

    def full_output(self, result: ToolResult) -> str:
        if result.sidecar and self.trace_dir is not None:
            try:
                return (self.trace_dir / result.sidecar).read_text(encoding="utf-8", errors="replace")
            except OSError:
                pass
        return result.output
