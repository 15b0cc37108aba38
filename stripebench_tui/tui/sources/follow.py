"""Attaching to an episode that runs elsewhere: follow its trace file, steer it through the server's control URL.

``stripebench serve`` runs a live episode once, in the server; every browser
connection gets its own app process (textual-serve), which attaches here: a
``TraceFollower`` reads the trace as the recorder writes it (only whole lines,
from the start, so a viewer who reconnects sees the current state), and an
``AttachedEpisode`` stands in for ``runtime.episode.Episode`` on the live
screen. Operator commands go to the server over HTTP (``RemoteDriver``), and
only an app started with the operator's control URL has one.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stripebench_tui.core.events import EpisodeEnd, event_from_dict
from stripebench_tui.core.operator import WAITING_FOR_APPROVAL
from stripebench_tui.core.trace import EPISODE_TRACE
from stripebench_tui.errors import BadFileError
from stripebench_tui.tui.sources.live_source import LiveSource

POLL_INTERVAL = 0.1  # seconds between looks at a trace that has not ended
READ_CHUNK = 1 << 20  # bytes read per poll: a long trace is caught up with in steps, the UI keeps drawing


class TraceFollower:
    """Feeds the complete lines a trace file has gained since the last ``poll`` into a ``LiveSource``."""

    def __init__(self, path: Path, source: LiveSource, wait_for_file: bool = True) -> None:
        self.path = path / EPISODE_TRACE if path.is_dir() else path
        self.wait_for_file = wait_for_file
        self.source = source
        self.offset = 0
        self.partial = b""
        self.ended: EpisodeEnd | None = None
        self.behind = False  # the last poll stopped at READ_CHUNK: there is more to read already

    def poll(self) -> int:
        """Read what was appended; returns how many events were fed (BadFileError when the file is not a trace)."""
        try:
            if self.wait_for_file and not self.path.exists():
                return 0  # a live episode still setting up: its recorder has not created the trace yet
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read(READ_CHUNK)
        except OSError as exc:
            raise BadFileError(f"{self.path}: cannot read ({exc.strerror})") from None
        self.offset += len(data)
        self.behind = len(data) == READ_CHUNK
        lines = (self.partial + data).split(b"\n")
        self.partial = lines.pop()  # the writer may be half-way through a line: keep it for the next poll
        fed = 0
        for raw in lines:
            if not raw.strip():
                continue
            try:
                ev = event_from_dict(json.loads(raw))
            except (ValueError, TypeError) as exc:
                raise BadFileError(f"{self.path}: not a stripebench trace ({exc})") from None
            if self.source.header is None and self.source.trace_dir is None:
                self.source.trace_dir = self.path.parent  # screenshots and sidecars resolve beside the trace
            self.source(ev)
            fed += 1
            if isinstance(ev, EpisodeEnd):
                self.ended = ev
        return fed


@dataclass
class AttachedResult:
    """What the live screen reads of a finished episode (the fields ``EpisodeResult`` has)."""

    trace_path: Path
    reason: str = ""
    passed: bool | None = None
    score: float | None = None
    error: str = ""
    setup_failed: bool = False

    @property
    def exit_code(self) -> int:
        return 0 if self.passed else 1


class RemoteDriver:
    """The driver's operator methods, sent as JSON to the server that runs the episode."""

    def __init__(self, control_url: str, source: LiveSource, on_error: Callable[[str], None] | None = None) -> None:
        self.control_url = control_url
        self.source = source
        self.on_error = on_error
        self._tasks: set[asyncio.Task[None]] = set()

    def _send(self, method: str, *args: Any, **kwargs: Any) -> None:
        task = asyncio.get_running_loop().create_task(self._post({"method": method, "args": list(args), "kwargs": kwargs}))
        self._tasks.add(task)  # keep a reference until it is done (the loop holds only weak ones)
        task.add_done_callback(self._tasks.discard)

    async def _post(self, body: dict[str, Any]) -> None:
        import httpx  # loaded on an operator's first command: a viewer, who sends none, never pays for it

        try:
            async with httpx.AsyncClient(timeout=10) as client:
                response = await client.post(self.control_url, json=body)
            problem = "" if response.status_code == 200 else f"the server refused {body['method']}: {response.text.strip()}"
        except httpx.HTTPError as exc:
            problem = f"cannot reach the server ({exc})"
        if problem and self.on_error is not None:
            self.on_error(problem)

    @property
    def pending_call(self) -> Any:
        """The call waiting for approval, as the trace shows it (the server's driver holds the real one)."""
        state = self.source.state
        if state.status != WAITING_FOR_APPROVAL or not state.awaiting_call:
            return None
        view = state.pending_calls.get(state.awaiting_call)
        return view.call if view is not None else None

    def pause(self) -> None:
        self._send("pause")

    def resume(self) -> None:
        self._send("resume")

    def step(self) -> None:
        self._send("step")

    def inject(self, text: str, kind: str = "note") -> None:
        self._send("inject", text, kind=kind)

    def approve(self, call_id: str = "") -> None:
        self._send("approve", call_id=call_id)

    def edit(self, arguments: dict[str, Any], call_id: str = "") -> None:
        self._send("edit", arguments, call_id=call_id)

    def reject(self, reason: str = "", call_id: str = "") -> None:
        self._send("reject", reason, call_id=call_id)

    def stop(self, reason: str = "") -> None:
        self._send("stop", reason)


class AttachedEpisode:
    """What ``LiveEpisodeScreen`` needs of an episode, for one that another process runs."""

    def __init__(self, trace: Path, source: LiveSource, control_url: str | None = None,
                 on_error: Callable[[str], None] | None = None) -> None:
        self.follower = TraceFollower(trace, source)
        self.source = source
        self.ready = asyncio.Event()
        self.driver = RemoteDriver(control_url, source, on_error) if control_url else None
        self.sandbox = None  # the screen reads the header itself only from its own sandbox; the follower feeds it
        self.recorder = None
        self.executor = None
        self.env = None
        self.agent = None

    async def run(self) -> AttachedResult:
        """Follow the trace until its ``episode_end`` (a viewer's app may leave earlier; the episode goes on)."""
        while True:
            self.follower.poll()
            if self.source.header is not None:
                self.ready.set()
            end = self.follower.ended
            if end is not None:
                failed = end.reason == "error"
                # Ended by an error before the agent's first turn: the setup failed, and the screen says why.
                return AttachedResult(self.follower.path, reason=end.reason, passed=end.passed, score=end.score,
                                      error=end.error if failed else "", setup_failed=failed and end.turn == 0)
            # The file gives no wake-up; the episode writes at its own pace (a backlog is read without waiting).
            await asyncio.sleep(0 if self.follower.behind else POLL_INTERVAL)

    def stop(self, reason: str = "") -> None:
        """Quitting a viewer never stops the episode; the operator stops it with the stop key."""


__all__ = ["AttachedEpisode", "AttachedResult", "RemoteDriver", "TraceFollower"]
