"""Printing a live episode as text, one readable line or block per event (``stripebench run --headless``).

Events on the bus are not yet redacted (the recorder redacts what it writes), so
everything printed goes through the same redactor with the episode's secrets.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TextIO

from stripebench_tui.core.events import EpisodeEnd, Event, ToolResult
from stripebench_tui.core.operator import is_status
from stripebench_tui.core.redact import Redactor
from stripebench_tui.formats.text import format_event


class _Inline:
    """What ``format_event`` needs from a trace, for events that have no trace file yet."""

    def full_output(self, result: ToolResult) -> str:
        return result.output


class LivePrinter:
    """A bus subscriber that prints each event as it happens."""

    def __init__(self, out: TextIO | None = None, secrets: Iterable[str] = ()) -> None:
        self.out = out or sys.stdout
        self.redactor = Redactor(secrets)
        self.turn: int | None = None
        self.ended = False

    def add_secrets(self, secrets: Iterable[str]) -> None:
        """Redact these values too (the episode's keys are known only once its backend started)."""
        for s in secrets:
            self.redactor.add_secret(s)

    def __call__(self, event: Event) -> None:
        if self.ended:
            return  # services stopping after the end are not part of the episode
        if is_status(event) and event.text not in ("paused", "waiting_for_approval"):  # type: ignore[attr-defined]
            return
        if event.turn != self.turn:
            self.turn = event.turn
            label = "setup" if event.turn == 0 else f"turn {event.turn}"
            self.out.write(f"\n── {label} · {event.t:6.1f}s " + "─" * 40 + "\n")
        text = format_event(_Inline(), event)  # type: ignore[arg-type]
        if text is not None:
            self.out.write(self.redactor.text(text) + "\n")
            self.out.flush()
        if is_status(event) and event.text == "waiting_for_approval":  # type: ignore[attr-defined]
            self.out.write("  (type approve, or reject WHY, and Enter)\n")
            self.out.flush()
        if getattr(event, "action", "") == "break_hit" and getattr(event, "details", {}).get("paused", True):
            self.out.write("  (paused at a breakpoint: type resume or step, and Enter)\n")
            self.out.flush()
        if isinstance(event, EpisodeEnd):
            self.ended = True


__all__ = ["LivePrinter"]
