"""The live screen's status line: what runs, where the selection is, and the driver's status."""

from __future__ import annotations

from textual.widgets import Static

from stripebench_tui.core.events import Header
from stripebench_tui.core.operator import ENDED, PAUSED, RUNNING, WAITING_FOR_APPROVAL, status_from_state
from stripebench_tui.core.state import EpisodeState
from stripebench_tui.tui.text import clean, duration
from stripebench_tui.tui.widgets.status_bar import episode_label

_STATUS_STYLE = {
    RUNNING: ("● running", "bold green"),
    PAUSED: ("‖ paused", "bold yellow"),
    WAITING_FOR_APPROVAL: ("⏸ waiting for approval", "bold black on yellow"),
    ENDED: ("■ ended", "bold"),
}


class LiveStatusBar(Static):
    """env · agent │ turn N (last M) │ elapsed │ tokens │ driver status │ follow │ note."""

    DEFAULT_CSS = "LiveStatusBar { height: 1; background: $panel; padding: 0 1; }"

    line_text = ""

    def show(self, header: Header | None, state: EpisodeState, selected: int | None, last: int | None,
             elapsed: float, following: bool, setup: str = "", note: str = "") -> None:
        """Redraw; ``selected``/``last`` are turn numbers (0 is setup), as the detail pane shows them."""
        text = episode_label(header)
        sel = "–" if selected is None else str(selected)
        text.append(f" │ turn {sel}" + ("" if last is None else f"/{last}"))
        text.append(f" │ {duration(elapsed) or '0ms'}")
        tot = state.totals
        text.append(f" │ {tot.tokens_in + tot.tokens_out:,} tok")
        if tot.cost_usd:
            text.append(f" ${tot.cost_usd:.4f}")
        status = status_from_state(state)
        text.append(" │ ")
        if setup and not status:
            text.append(f"◌ setting up: {clean(setup)}", style="bold cyan")
        else:
            label, style = _STATUS_STYLE.get(status, (status or "starting", "bold"))
            if status == ENDED and state.ended is not None:
                label = f"■ ended: {state.ended.reason}"
                if state.ended.score is not None:
                    label += f" · score {state.ended.score:.2f}"
            text.append(label, style=style)
            waiting = state.pending_calls.get(state.awaiting_call) if status == WAITING_FOR_APPROVAL else None
            if waiting is not None:
                text.append(f" {clean(waiting.call.tool)}: a approve · e edit · r reject", style="bold")
        if not following and status != ENDED:
            text.append(" │ f: follow", style="italic")
        if note:
            text.append(f" │ {clean(note)}", style="italic")
        self.line_text = text.plain
        self.update(text)
