"""The episode step that installs an app's npm packages: ``node_packages.install`` with its progress on the bus.

Each line pnpm prints becomes a ``packages`` service log event (the TUI's services pane shows the first
install's progress) and a line of ``logs/packages.log``; the end is ``healthy`` with the time it took, or
``unhealthy`` and ServiceFailed: the cause and fix on one line, then the log's last lines.
"""

from __future__ import annotations

import asyncio
from collections import deque
from pathlib import Path

from stripebench_tui.core.bus import EventBus
from stripebench_tui.core.events import Service
from stripebench_tui.core.redact import Redactor
from stripebench_tui.runtime.node_packages import PNPM, InstallProblem, install
from stripebench_tui.runtime.services import ServiceFailed, with_tail

SERVICE = "packages"


async def install_node_packages(bus: EventBus, app_dir: Path, log_path: Path, redactor: Redactor, *,
                                hoist: str = "", min_node: int | None = None) -> float:
    """Install the packages of ``app_dir`` (seconds taken); ServiceFailed naming the cause, the fix and the log."""
    loop = asyncio.get_running_loop()
    tail: deque[str] = deque(maxlen=20)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    await bus.publish(Service(service=SERVICE, status="starting", text=f"{PNPM} install in {app_dir.name or app_dir}"))
    with log_path.open("a", encoding="utf-8") as log:
        def say(line: str) -> None:  # called on the install's thread
            line = redactor.text(line)
            tail.append(line)
            log.write(line + "\n")
            log.flush()
            loop.call_soon_threadsafe(bus.publish_nowait, Service(service=SERVICE, status="log", text=line))

        try:
            took = await asyncio.to_thread(install, app_dir, say, hoist=hoist, min_node=min_node)
        except InstallProblem as exc:
            why = with_tail(f"npm packages: {exc} (see {log_path})", tail)
            await bus.publish(Service(service=SERVICE, status="unhealthy", text=str(exc)))
            raise ServiceFailed(why) from None
    await bus.publish(Service(service=SERVICE, status="healthy", text=f"installed in {took:.1f} s"))
    return took


__all__ = ["SERVICE", "install_node_packages"]
