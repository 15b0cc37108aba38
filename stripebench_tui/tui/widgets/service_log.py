"""The environment's service log (seed, services, tool servers), following new lines unless scrolled away."""

from __future__ import annotations

from collections.abc import Iterable

from textual.widgets import Log

from stripebench_tui.core.events import Service
from stripebench_tui.tui.text import clean


def service_line(ev: Service) -> str:
    """One log line: the service, its status (or stream) and its text, control sequences stripped."""
    if ev.status == "log":
        where = f"{ev.service}{'!' if ev.stream == 'stderr' else ''}"
        return f"{where:>10} │ {clean(ev.text)}"
    extra = f" (exit {ev.exit_code})" if ev.exit_code is not None else ""
    text = f" {clean(ev.text)}" if ev.text else ""
    return f"{ev.service:>10} ● {ev.status}{extra}{text}"


class ServiceLog(Log):
    """Appends ``state.service_log`` lines as they arrive; Log's auto-scroll is the follow mode."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, max_lines=5000, auto_scroll=True)
        self._shown: Service | None = None  # the newest line already written

    def show(self, lines: Iterable[Service]) -> None:
        """Write the lines of ``lines`` (the state's deque) that are newer than the last one shown."""
        lines = list(lines)
        start = 0
        if self._shown is not None:
            for i in range(len(lines) - 1, -1, -1):
                if lines[i] is self._shown:
                    start = i + 1
                    break
        new = lines[start:]
        if new:
            # Follow only when the reader is at the bottom: scrolling up to read pauses the follow.
            self.auto_scroll = self.is_vertical_scroll_end or self.max_scroll_y == 0
            self.write_lines(service_line(ev) for ev in new)
            self._shown = new[-1]
