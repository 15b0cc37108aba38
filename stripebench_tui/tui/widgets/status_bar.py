"""One line at the bottom: what is replaying, where, and how fast."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.widgets import Static

from stripebench_tui.core.events import Header
from stripebench_tui.core.state import EpisodeState
from stripebench_tui.tui.text import clean, duration


def episode_label(header: Header | None) -> Text:
    """``env · agent · model · where`` it ran: ``docker <container>``, or ``local (not confined)`` on this machine."""
    text = Text()
    if header is None:
        return text
    text.append(clean(header.env) or "(env?)", style="bold")
    text.append(f" · {clean(header.agent) or 'agent?'}")
    if header.model:
        text.append(f" · {clean(header.model)}", style="italic")
    if header.sandbox == "local":  # the agent's commands ran as this user, with this user's access
        text.append(" · local (not confined)", style="dim")
    elif header.sandbox:
        where = clean(header.sandbox)
        container = header.extra.get("container")
        text.append(f" · {where}" + (f" {clean(str(container))}" if container else ""), style="dim")
    return text


class StatusBar(Static):
    """environment · agent · model · turn k/n · elapsed · tokens/cost · play state · speed."""

    DEFAULT_CSS = Path(__file__).with_suffix(".tcss").read_text()

    def show(
        self,
        header: Header | None,
        state: EpisodeState | None,
        position: int | None,
        total: int | None,
        playing: bool,
        speed: float,
        note: str = "",
        elapsed: float | None = None,
        turn_number: int | None = None,
        last_turn: int | None = None,
    ) -> None:
        text = episode_label(header)
        # Turn numbers as the detail pane shows them (0 is setup), not 1-based row positions.
        if turn_number is not None:
            k = str(turn_number)
        else:
            k = "–" if position is None else str(position + 1)
        n = str(last_turn) if last_turn is not None else ("?" if total is None else str(total))
        text.append(f" │ turn {k}/{n}")
        if state is not None:
            elapsed = state.last_t
        if elapsed is not None:
            text.append(f" │ {duration(elapsed) or '0ms'}")
        if state is None:
            text.append(" │ reading the episode…", style="italic")
        else:
            tot = state.totals
            text.append(f" │ {tot.tokens_in + tot.tokens_out:,} tok")
            if tot.cost_usd:
                text.append(f" ${tot.cost_usd:.4f}")
        text.append(" │ ")
        text.append("▶ playing" if playing else "‖ paused", style="bold green" if playing else "bold")
        text.append(" ×max" if speed == float("inf") else f" ×{speed:g}")
        if note:
            text.append(f" │ {note}", style="italic")
        self.line_text = text.plain
        self.update(text, layout=False)  # one line, full width: its size never depends on the text
