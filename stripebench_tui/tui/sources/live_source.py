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
import os
from collections.abc import Iterable
from pathlib import Path

from stripebench_tui.core.episode_files import Refused, open_episode_file, read_episode_file
from stripebench_tui.core.events import Event, Header, ToolResult, event_from_dict
from stripebench_tui.core.redact import Redactor
from stripebench_tui.core.state import EpisodeState, Reducer
from stripebench_tui.tui.sources.episode_source import EventListSource
from stripebench_tui.tui.text import clean

SCREENSHOT_BYTES = 32 * 1024 * 1024  # a bigger file is named, not decoded (a page screenshot is far smaller)


@dataclasses.dataclass(frozen=True)
class Shot:
    """The newest screenshot: its bytes, or why there are none to show."""

    turn: int
    name: str  # as the trace names it, relative to the episode directory
    data: bytes = b""
    problem: str = ""  # e.g. "refused, it points outside the episode directory"

    @property
    def caption(self) -> str:
        label = clean(f"turn {self.turn}: {self.name}")
        return f"{label} ({self.problem})" if self.problem else label


def load_screenshot(episode_dir: Path | None, turn: int, name: str) -> Shot:
    """The screenshot ``name`` of the episode, read only through ``core.episode_files`` (never outside it)."""
    if episode_dir is None:
        return Shot(turn, name, problem="the episode directory is not known")
    try:
        with open_episode_file(episode_dir, name) as f:
            size = os.fstat(f.fileno()).st_size
            if size > SCREENSHOT_BYTES:
                return Shot(turn, name, problem=f"{size:,} bytes, too big to show")
            return Shot(turn, name, f.read())
    except Refused as exc:
        return Shot(turn, name, problem=clean(f"refused, {exc.reason}"))
    except FileNotFoundError:
        return Shot(turn, name, problem="file missing")
    except OSError as exc:
        return Shot(turn, name, problem=f"cannot read ({exc.strerror})")


class LiveSource(EventListSource):
    """Events of a running episode, as they are published."""

    live = True

    def __init__(self) -> None:
        super().__init__(())
        self.reducer = Reducer()
        self.version = 0
        self.trace_dir: Path | None = None  # where screenshots and sidecars are (relative paths resolve here)
        self.last_image: tuple[int, str] | None = None  # (turn, path relative to the trace dir) of the newest image
        self._shot: tuple[tuple[Path | None, int, str], Shot] | None = None  # the newest image, read once
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
            # A follower has already set the directory the trace really is in: a header's claim must not move
            # the files it names somewhere else.
            if extra.get("episode_dir") and self.trace_dir is None:
                self.trace_dir = Path(str(extra["episode_dir"]))
        else:
            self.reducer.apply(ev)
            if isinstance(ev, ToolResult) and ev.images:
                self.last_image = (ev.turn, ev.images[-1])
        self.version += 1

    def screenshot(self) -> Shot | None:
        """The newest screenshot (read when it changes; the screen asks on every redraw), or None before any."""
        if self.last_image is None:
            return None
        key = (self.trace_dir, *self.last_image)
        if self._shot is None or self._shot[0] != key:
            self._shot = (key, load_screenshot(*key))
        return self._shot[1]

    def full_output(self, result: ToolResult) -> str:
        if result.sidecar and self.trace_dir is not None:
            try:
                return read_episode_file(self.trace_dir, result.sidecar).decode("utf-8", "replace")
            except Refused as exc:
                return result.output + f"\n[full output not shown: sidecar {exc}]"
            except OSError:
                pass
        return result.output
