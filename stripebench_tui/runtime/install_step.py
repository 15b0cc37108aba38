"""An episode step that installs something for the app (npm packages, gems) with its progress on the bus.

``run_install`` runs a blocking install on a thread: each line it says becomes a ``log`` event of the step's
service and a line of its log file (redacted both ways); the end is ``healthy`` with the text the caller gives, or
``unhealthy`` and ServiceFailed: the cause on one line, then the log's last lines.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from stripebench_tui.core.bus import EventBus
from stripebench_tui.core.events import Service
from stripebench_tui.core.redact import Redactor
from stripebench_tui.runtime.services import ServiceFailed, with_tail

T = TypeVar("T")
Say = Callable[[str], None]


async def run_install(bus: EventBus, service: str, starting: str, log_path: Path, redactor: Redactor,
                      install: Callable[[Say], T], problems: tuple[type[Exception], ...], what: str,
                      done: Callable[[T], str]) -> T:
    """``install(say)`` on a thread, announced as ``starting``; ``problems`` it raises end the step as ServiceFailed
    ("``what``: the problem (see the log)"); ``done(result)`` is the healthy event's text."""
    loop = asyncio.get_running_loop()
    tail: deque[str] = deque(maxlen=20)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    await bus.publish(Service(service=service, status="starting", text=starting))
    with log_path.open("a", encoding="utf-8") as log:
        def say(line: str) -> None:  # called on the install's thread
            line = redactor.text(line)
            tail.append(line)
            log.write(line + "\n")
            log.flush()
            loop.call_soon_threadsafe(bus.publish_nowait, Service(service=service, status="log", text=line))

        try:
            result = await asyncio.to_thread(install, say)
        except problems as exc:
            await bus.publish(Service(service=service, status="unhealthy", text=str(exc)))
            raise ServiceFailed(with_tail(f"{what}: {exc} (see {log_path})", tail)) from None
    await bus.publish(Service(service=service, status="healthy", text=done(result)))
    return result


__all__ = ["Say", "run_install"]
