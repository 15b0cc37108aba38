"""What a batch shows while it runs: a Rich progress display on a terminal, one line per episode otherwise."""

from __future__ import annotations

import re
import threading
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from stripebench_tui.batch.manifest import PASSED
from stripebench_tui.batch.matrix import Cell
from stripebench_tui.core.sanitize import sanitize

_TURN = re.compile(r"── turn (\d+)")  # the headless printer's turn rule
_MARK = {PASSED: "[green]✓[/]", "failed": "[red]✗[/]", "error": "[red]![/]", "infra_error": "[yellow]↻[/]"}


def end_line(cell: Cell, result: dict[str, Any], done: int, total: int) -> str:
    """``[3/12] ✓ env__oracle__r1 passed 1.00 · 4 turns (attempt 1, local)``"""
    score = result.get("score")
    text = f"{result['status']}" + (f" {score:.2f}" if isinstance(score, (int, float)) else "")
    text += f" · {result.get('turns', 0)} turns (attempt {result.get('attempts', 1)}, {result.get('where', '')})"
    if result.get("error"):
        text += f": {escape(sanitize(str(result['error'])))}"
    return f"[{done}/{total}] {_MARK.get(result['status'], '?')} {cell.id} {text}"


def is_progress_line(text: str) -> bool:
    """Whether a line of an episode's output moves its progress row (a runner may forward only these)."""
    return _TURN.search(text) is not None


class BatchProgress:
    """A ``Listener`` for ``run_batch``: overall bar with ETA plus a row per running episode (its turn)."""

    def __init__(self, total: int, console: Console | None = None) -> None:
        self.console = console or Console()
        self.total = total
        self.done = 0
        self._lock = threading.Lock()
        self._rows: dict[str, Any] = {}
        self._turns: dict[str, int] = {}
        self.live = self.console.is_terminal
        self.progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), console=self.console,
                                 disable=not self.live)
        self.overall = self.progress.add_task("episodes", total=total)

    def __enter__(self) -> BatchProgress:
        self.progress.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.progress.stop()

    def started(self, cell: Cell, attempt: int, where: str) -> None:
        with self._lock:
            self._turns[cell.id] = 0
            if self.live:
                self._rows[cell.id] = self.progress.add_task(f"  {cell.id} · starting ({where})", total=None)

    def line(self, cell: Cell, text: str) -> None:
        match = _TURN.search(text)
        if match is None:
            return
        with self._lock:
            self._turns[cell.id] = int(match.group(1))
            row = self._rows.get(cell.id)
            if row is not None:
                self.progress.update(row, description=f"  {cell.id} · turn {match.group(1)}")

    def ended(self, cell: Cell, result: dict[str, Any]) -> None:
        with self._lock:
            if result["status"] != "infra_error":
                self.done += 1
                self.progress.advance(self.overall)
            row = self._rows.pop(cell.id, None)
            if row is not None:
                self.progress.remove_task(row)
            self.console.print(end_line(cell, result, self.done, self.total), highlight=False, soft_wrap=True)


__all__ = ["BatchProgress", "end_line", "is_progress_line"]
