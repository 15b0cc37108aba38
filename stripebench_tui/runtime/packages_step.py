"""The episode step that installs an app's npm packages: ``node_packages.install`` with its progress on the bus.

Each line pnpm prints becomes a ``packages`` service log event (the TUI's services pane shows the first
install's progress) and a line of ``logs/packages.log``; the end is ``healthy`` with the time it took, or
``unhealthy`` and ServiceFailed: the cause and fix on one line, then the log's last lines.
"""

from __future__ import annotations

from pathlib import Path

from stripebench_tui.core.bus import EventBus
from stripebench_tui.core.redact import Redactor
from stripebench_tui.runtime.install_step import run_install
from stripebench_tui.runtime.node_packages import PNPM, InstallProblem, install

SERVICE = "packages"


async def install_node_packages(bus: EventBus, app_dir: Path, log_path: Path, redactor: Redactor, *,
                                hoist: str = "", min_node: int | None = None) -> float:
    """Install the packages of ``app_dir`` (seconds taken); ServiceFailed naming the cause, the fix and the log."""
    return await run_install(bus, SERVICE, f"{PNPM} install in {app_dir.name or app_dir}", log_path, redactor,
                             lambda say: install(app_dir, say, hoist=hoist, min_node=min_node), (InstallProblem,),
                             "npm packages", lambda took: f"installed in {took:.1f} s")


__all__ = ["SERVICE", "install_node_packages"]
